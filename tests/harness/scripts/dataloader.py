"""Training from a DataLoader with two worker processes; each worker prints its pid once."""
import os

import torch
from torch.utils.data import DataLoader, Dataset

announced = False


class Squares(Dataset):
    def __len__(self):
        return 64

    def __getitem__(self, i):
        global announced
        if not announced:
            announced = True
            os.write(1, f"worker {os.getpid()}\n".encode())  # one write: two workers never interleave a line
        x = torch.full((4,), float(i) / 64)
        return x, x.pow(2).sum(0, keepdim=True)


if __name__ == "__main__":
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for x, y in DataLoader(Squares(), batch_size=8, num_workers=2):
        optimizer.zero_grad()
        torch.nn.functional.mse_loss(model(x), y).backward()
        optimizer.step()
