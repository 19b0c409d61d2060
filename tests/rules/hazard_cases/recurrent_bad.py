"""TM601: recurrent state carried into the next iteration with its graph.

Each function reproduces "Trying to backward through the graph a second time" (test_hazards.py runs them).
"""
import torch
import torch.nn as nn


class RNNCell(nn.Module):
    """The seed's hand-written cell (002): the state keeps this step's graph."""

    def __init__(self, n_in=3, n_hidden=4):
        super().__init__()
        self.W_ih = nn.Parameter(torch.randn(n_in, n_hidden) * 0.1)
        self.W_hh = nn.Parameter(torch.randn(n_hidden, n_hidden) * 0.1)
        self.b_x = nn.Parameter(torch.zeros(n_hidden))
        self.hx = torch.zeros(1, n_hidden)

    def forward(self, X_t):
        out = torch.mm(X_t, self.W_ih) + torch.mm(self.hx, self.W_hh) + self.b_x
        self.hx = out  # TM601
        return out


def seed_cell(steps=2):
    cell = RNNCell()
    optimizer = torch.optim.SGD(cell.parameters(), lr=0.01)
    for step in range(steps):
        out = cell(torch.randn(1, 3))
        optimizer.zero_grad()
        out.pow(2).sum().backward()
        optimizer.step()


def lstm_loop(steps=2):
    rnn = nn.LSTM(3, 4)
    optimizer = torch.optim.Adam(rnn.parameters(), 1e-3)
    hidden = (torch.zeros(1, 2, 4), torch.zeros(1, 2, 4))
    for step in range(steps):
        output, hidden = rnn(torch.randn(5, 2, 3), hidden)  # TM601
        loss = output.pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def gru_hidden_only(model, batches):
    hidden = torch.zeros(1, 2, 4)
    for x in batches:
        hidden = model(x, hidden)[1]  # TM601
        model.zero_grad()
        hidden.sum().backward()


def cell_output_carried(steps=2):
    cell = nn.RNNCell(3, 4)
    optimizer = torch.optim.SGD(cell.parameters(), lr=0.01)
    h = torch.zeros(1, 4)
    for step in range(steps):
        out = cell(torch.randn(1, 3), h)
        h = out  # TM601
        optimizer.zero_grad()
        out.sum().backward()
        optimizer.step()


class Trainer:
    def __init__(self):
        self.model = nn.GRUCell(3, 4)
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.01)
        self.state = torch.zeros(1, 4)

    def fit(self, steps=2):
        for step in range(steps):
            self.state = self.model(torch.randn(1, 3), self.state)  # TM601
            self.optimizer.zero_grad()
            self.state.sum().backward()
            self.optimizer.step()


class Integrator(nn.Module):
    """A state updated through a submodule and never reset."""

    def __init__(self):
        super().__init__()
        self.cell = nn.GRUCell(3, 4)
        self.state = torch.zeros(1, 4)

    def forward(self, x):
        self.state = self.cell(x, self.state)  # TM601
        return self.state


def integrator(steps=2):
    model = Integrator()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for step in range(steps):
        optimizer.zero_grad()
        model(torch.randn(1, 3)).sum().backward()
        optimizer.step()


def carried_across_batches(steps=2):
    """The state is rebuilt inside each sequence but never reset between batches."""
    cell = nn.RNNCell(3, 4)
    optimizer = torch.optim.SGD(cell.parameters(), lr=0.01)
    h = torch.zeros(1, 4)
    for batch in range(steps):
        for t in range(3):
            h = cell(torch.randn(1, 3), h)  # TM601
        optimizer.zero_grad()
        h.sum().backward()
        optimizer.step()


def run_gru_hidden_only():
    gru = nn.GRU(3, 4)
    gru_hidden_only(gru, [torch.randn(5, 2, 3) for _ in range(2)])


HAZARDS = [seed_cell, lstm_loop, run_gru_hidden_only, cell_output_carried, lambda: Trainer().fit(), integrator,
           carried_across_batches]
