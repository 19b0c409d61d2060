"""TM603 near-misses: lists built from iterables that are not tensors, or tensors put in a list whole."""
import torch
import torch.nn as nn

torch.manual_seed(0)


def parameter_lists():
    model, head = nn.Linear(4, 4), nn.Linear(4, 1)
    z = torch.zeros(1, 4, requires_grad=True)
    params = list(model.parameters()) + list(head.parameters()) + [z]
    optimizer = torch.optim.Adam(params, 1e-3)
    for p in params:
        p.requires_grad_(True)
    second = torch.optim.SGD([*model.parameters(), z], lr=0.1)
    groups = torch.optim.SGD([{'params': model.parameters()}, {'params': [z], 'lr': 1e-2}], lr=0.1)
    groups.add_param_group({'params': list(head.parameters())})
    head(model(z)).sum().backward()
    optimizer.step()
    second.step()
    return z


def other_lists():
    model = nn.BatchNorm1d(4)
    buffers = list(model.buffers())
    indices = list(range(10))
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.randn(6, 2)), batch_size=2)
    batches = list(loader)
    x = torch.randn(4, 3)
    rows = list(x)
    chunks = list(x.chunk(2))
    maxima = list(torch.max(x, 1))
    pieces = [*x.split(2)]
    optimizer = torch.optim.SGD(list(model.parameters()), lr=0.1)
    return buffers, indices, batches, rows, chunks, maxima, pieces, optimizer


def rows_are_data():
    embeddings = torch.randn(5, 3)
    table = list(embeddings)
    weights = torch.ones(3, requires_grad=True)
    optimizer = torch.optim.SGD([weights], lr=0.1)
    loss = sum((row * weights).sum() for row in table)
    loss.backward()
    optimizer.step()


def legacy_perturbation():
    from torch.autograd import Variable
    transformer = nn.Linear(8, 8)
    perturbation = Variable(torch.rand(1, 8), requires_grad=True)
    params = list(transformer.parameters()) + [perturbation]
    optimizer = torch.optim.Adam(params, 1e-3)
    transformer(perturbation).sum().backward()
    optimizer.step()


def main():
    parameter_lists()
    other_lists()
    rows_are_data()
    legacy_perturbation()


if __name__ == "__main__":
    main()
