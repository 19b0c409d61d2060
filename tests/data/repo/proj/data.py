"""Reads the committed CSV through a path relative to the working directory."""
import torch


def load(path="data/points.csv"):
    with open(path) as handle:
        next(handle)
        rows = [[float(v) for v in line.split(",")] for line in handle if line.strip()]
    features = torch.FloatTensor([row[:4] for row in rows])
    labels = torch.LongTensor([int(row[4]) for row in rows])
    return features, labels
