import os
import torch


class Dictionary(object):
    def __init__(self):
        self.word2idx = {}
        self.idx2word = []

    def add_word(self, word):
        if word not in self.word2idx:
            self.idx2word.append(word)
            self.word2idx[word] = len(self.idx2word) - 1
        return self.word2idx[word]

    def __len__(self):
        return len(self.idx2word)


class Corpus(object):
    """One small text file, split by lines into train / valid / test (80/10/10)."""

    def __init__(self, path):
        if not os.path.exists(path):
            # relative paths are also looked up next to this file
            path = os.path.join(os.path.dirname(os.path.abspath(__file__)), path)
        assert os.path.exists(path)
        with open(path, 'r') as f:
            lines = f.readlines()
        n_valid = n_test = len(lines) // 10
        n_train = len(lines) - n_valid - n_test
        self.dictionary = Dictionary()
        self.train = self.tokenize(lines[:n_train])
        self.valid = self.tokenize(lines[n_train:n_train + n_valid])
        self.test = self.tokenize(lines[n_train + n_valid:])

    def tokenize(self, lines):
        """Tokenizes a list of lines."""
        # Add words to the dictionary
        tokens = 0
        for line in lines:
            words = line.split() + ['<eos>']
            tokens += len(words)
            for word in words:
                self.dictionary.add_word(word)

        # Tokenize file content
        ids = torch.LongTensor(tokens)
        token = 0
        for line in lines:
            words = line.split() + ['<eos>']
            for word in words:
                ids[token] = self.dictionary.word2idx[word]
                token += 1

        return ids
