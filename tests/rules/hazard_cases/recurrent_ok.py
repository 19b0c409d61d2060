"""TM601 near-misses: recurrent state that is carried correctly (every function runs; see test_hazards.py)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class RNNModel(nn.Module):
    """word_language_model-style container: embedding, LSTM, decoder."""

    def __init__(self, ntoken=20, ninp=8, nhid=8, nlayers=1):
        super(RNNModel, self).__init__()
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnn = nn.LSTM(ninp, nhid, nlayers)
        self.decoder = nn.Linear(nhid, ntoken)
        self.nhid, self.nlayers = nhid, nlayers

    def forward(self, input, hidden):
        emb = self.encoder(input)
        output, hidden = self.rnn(emb, hidden)
        return self.decoder(output), hidden

    def init_hidden(self, bsz):
        weight = next(self.parameters())
        return (weight.new_zeros(self.nlayers, bsz, self.nhid), weight.new_zeros(self.nlayers, bsz, self.nhid))


def repackage_hidden(h):
    """Wraps hidden states in new Tensors, to detach them from their history."""
    if isinstance(h, torch.Tensor):
        return h.detach()
    return tuple(repackage_hidden(v) for v in h)


def word_language_model(steps=3):
    model = RNNModel()
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    data = torch.randint(0, 20, (steps * 5 + 1, 4))
    hidden = model.init_hidden(4)
    for i in range(0, steps * 5, 5):
        source, targets = data[i:i + 5], data[i + 1:i + 6]
        hidden = repackage_hidden(hidden)
        model.zero_grad()
        output, hidden = model(source, hidden)
        loss = criterion(output.view(-1, 20), targets.reshape(-1))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.25)
        optimizer.step()


def evaluate(model, data):
    model.eval()
    total_loss = 0.0
    hidden = model.init_hidden(4)
    with torch.no_grad():
        for i in range(0, data.size(0) - 1, 5):
            output, hidden = model(data[i:i + 5], hidden)
            total_loss += output.sum().item()
    return total_loss


def init_hidden_each_batch(steps=3):
    model = RNNModel()
    optimizer = torch.optim.Adam(model.parameters(), 1e-3)
    for step in range(steps):
        hidden = model.init_hidden(2)
        output, hidden = model(torch.randint(0, 20, (5, 2)), hidden)
        loss = output.pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


class RNNCellDetached(nn.Module):
    """The seed's hand-written cell, fixed: the state is kept without its graph."""

    def __init__(self, n_in=3, n_hidden=4):
        super().__init__()
        self.W_ih = nn.Parameter(torch.randn(n_in, n_hidden) * 0.1)
        self.W_hh = nn.Parameter(torch.randn(n_hidden, n_hidden) * 0.1)
        self.b = nn.Parameter(torch.zeros(n_hidden))
        self.hx = torch.zeros(1, n_hidden)

    def forward(self, x_t):
        out = torch.mm(x_t, self.W_ih) + torch.mm(self.hx, self.W_hh) + self.b
        self.hx = out.detach()
        return out


def detached_cell(steps=3):
    cell = RNNCellDetached()
    optimizer = torch.optim.SGD(cell.parameters(), lr=0.01)
    for step in range(steps):
        out = cell(torch.randn(1, 3))
        optimizer.zero_grad()
        out.pow(2).sum().backward()
        optimizer.step()


class LeakyNeuron(nn.Module):
    """Membrane potential kept across time steps; reset() starts every sequence."""

    def __init__(self, n=4):
        super().__init__()
        self.fc = nn.Linear(n, n)
        self.mem = None

    def reset(self):
        self.mem = None

    def forward(self, x):
        current = self.fc(x)
        if self.mem is None:
            self.mem = torch.zeros_like(current)
        self.mem = 0.9 * self.mem + current
        return torch.sigmoid(self.mem)


def stateful_module_with_reset(steps=3):
    neuron = LeakyNeuron()
    optimizer = torch.optim.Adam(neuron.parameters(), 1e-3)
    for step in range(steps):
        neuron.reset()
        total = 0
        for t in range(4):
            total = total + neuron(torch.randn(2, 4)).sum()
        optimizer.zero_grad()
        total.backward()
        optimizer.step()


def truncated_bptt(steps=12, k=4):
    cell = nn.GRUCell(3, 5)
    optimizer = torch.optim.SGD(cell.parameters(), lr=0.01)
    h = torch.zeros(1, 5)
    loss = 0
    for t in range(steps):
        h = cell(torch.randn(1, 3), h)
        loss = loss + h.pow(2).sum()
        if (t + 1) % k == 0:
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            h = h.detach()
            loss = 0


def detach_in_place_each_step(steps=3):
    lstm = nn.LSTM(3, 4)
    optimizer = torch.optim.SGD(lstm.parameters(), lr=0.01)
    hidden = (torch.zeros(1, 1, 4), torch.zeros(1, 1, 4))
    for step in range(steps):
        hidden = tuple(h.detach() for h in hidden)
        output, hidden = lstm(torch.randn(2, 1, 3), hidden)
        optimizer.zero_grad()
        output.sum().backward()
        optimizer.step()


class ActorCritic(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTMCell(4, 8)
        self.actor = nn.Linear(8, 2)
        self.critic = nn.Linear(8, 1)

    def forward(self, inputs):
        x, (hx, cx) = inputs
        hx, cx = self.lstm(x, (hx, cx))
        return self.critic(hx), self.actor(hx), (hx, cx)


def a3c_style(steps=4):
    model = ActorCritic()
    optimizer = torch.optim.Adam(model.parameters(), 1e-3)
    done = True
    state = torch.randn(1, 4)
    for step in range(steps):
        if done:
            cx = torch.zeros(1, 8)
            hx = torch.zeros(1, 8)
        else:
            cx = cx.detach()
            hx = hx.detach()
        value, logit, (hx, cx) = model((state, (hx, cx)))
        prob = F.softmax(logit, dim=-1)
        action = prob.multinomial(num_samples=1).detach()
        state = torch.randn(1, 4) + action.float()
        loss = -(F.log_softmax(logit, dim=-1).gather(1, action)).sum() + value.pow(2).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        done = step % 2 == 1


class ToyEnv:
    def reset(self):
        return torch.randn(4)

    def step(self, action):
        return torch.randn(4), 1.0, False, {}


def reinforce_env_loop(steps=4):
    policy = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2))
    optimizer = torch.optim.Adam(policy.parameters(), lr=1e-2)
    env = ToyEnv()
    state = env.reset()
    running_reward = 10.0
    for t in range(steps):
        probs = F.softmax(policy(state), dim=-1)
        m = torch.distributions.Categorical(probs)
        action = m.sample()
        state, reward, done, _ = env.step(action.item())
        loss = -m.log_prob(action) * reward
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        running_reward = 0.05 * reward + (1 - 0.05) * running_reward


class Sequence(nn.Module):
    """time_sequence_prediction: the state starts from zeros in every forward."""

    def __init__(self):
        super(Sequence, self).__init__()
        self.lstm1 = nn.LSTMCell(1, 8)
        self.linear = nn.Linear(8, 1)

    def forward(self, input, future=0):
        outputs = []
        h_t = torch.zeros(input.size(0), 8)
        c_t = torch.zeros(input.size(0), 8)
        for input_t in input.split(1, dim=1):
            h_t, c_t = self.lstm1(input_t, (h_t, c_t))
            output = self.linear(h_t)
            outputs += [output]
        for i in range(future):
            h_t, c_t = self.lstm1(output, (h_t, c_t))
            output = self.linear(h_t)
            outputs += [output]
        return torch.cat(outputs, dim=1)


def lbfgs_sequence(steps=2):
    seq = Sequence()
    criterion = nn.MSELoss()
    optimizer = torch.optim.LBFGS(seq.parameters(), lr=0.8, max_iter=2)
    data = torch.randn(3, 6)
    for i in range(steps):
        def closure():
            optimizer.zero_grad()
            out = seq(data[:, :-1])
            loss = criterion(out, data[:, 1:])
            loss.backward()
            return loss
        optimizer.step(closure)


class Attention(nn.Module):
    """Keeps its last weights for plotting: stored, never read back as input."""

    def __init__(self):
        super().__init__()
        self.score = nn.Linear(4, 1)
        self.last_weights = None
        self.calls = 0

    def forward(self, keys):
        weights = F.softmax(self.score(keys), dim=0)
        self.last_weights = weights
        self.calls = self.calls + 1
        return (weights * keys).sum(0)


def stored_attention(steps=3):
    attn = Attention()
    optimizer = torch.optim.SGD(attn.parameters(), lr=0.1)
    for step in range(steps):
        out = attn(torch.randn(5, 4))
        optimizer.zero_grad()
        out.sum().backward()
        optimizer.step()


class RunningStats(nn.Module):
    """An exponential moving average of the inputs, updated without grad."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.register_buffer("running_mean", torch.zeros(4))

    def forward(self, x):
        y = self.fc(x)
        with torch.no_grad():
            self.running_mean = 0.9 * self.running_mean + 0.1 * y.mean(0)
        return y - self.running_mean


def ema_under_no_grad(steps=3):
    model = RunningStats()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(steps):
        optimizer.zero_grad()
        model(torch.randn(3, 4)).pow(2).mean().backward()
        optimizer.step()


def running_losses(steps=3):
    model = nn.Linear(3, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    total_loss = 0.0
    smoothed = 0.0
    for step in range(steps):
        loss = model(torch.randn(4, 3)).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        total_loss += loss.item()
        smoothed = 0.9 * smoothed + 0.1 * loss.item()
    return total_loss, smoothed


def generate(steps=5):
    """Sampling loop: the hidden state is carried, but nothing is back-propagated."""
    model = RNNModel()
    model.eval()
    hidden = model.init_hidden(1)
    word = torch.randint(0, 20, (1, 1))
    with torch.no_grad():
        for i in range(steps):
            output, hidden = model(word, hidden)
            word = torch.multinomial(output.squeeze().exp(), 1).view(1, 1)
    return word


def seq2seq_teacher_forcing(steps=2):
    encoder, decoder = nn.GRU(3, 6), nn.GRU(3, 6)
    head = nn.Linear(6, 3)
    params = list(encoder.parameters()) + list(decoder.parameters()) + list(head.parameters())
    optimizer = torch.optim.SGD(params, lr=0.01)
    for it in range(steps):
        encoder_hidden = torch.zeros(1, 1, 6)
        encoder_output, encoder_hidden = encoder(torch.randn(4, 1, 3), encoder_hidden)
        decoder_hidden = encoder_hidden
        decoder_input = torch.zeros(1, 1, 3)
        loss = 0
        for di in range(3):
            decoder_output, decoder_hidden = decoder(decoder_input, decoder_hidden)
            prediction = head(decoder_output)
            loss = loss + prediction.pow(2).mean()
            decoder_input = prediction.detach()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


class LSTMTagger(nn.Module):
    """The LSTM tagger tutorial's model: its training loop (often in another file) sets
    `model.hidden = model.init_hidden()` before every sentence."""

    def __init__(self, vocab=10, dim=4, tags=3):
        super(LSTMTagger, self).__init__()
        self.embeddings = nn.Embedding(vocab, dim)
        self.lstm = nn.LSTM(dim, dim)
        self.hidden2tag = nn.Linear(dim, tags)
        self.hidden = self.init_hidden()

    def init_hidden(self):
        return (torch.zeros(1, 1, 4), torch.zeros(1, 1, 4))

    def forward(self, sentence):
        embeds = self.embeddings(sentence)
        lstm_out, self.hidden = self.lstm(embeds.view(len(sentence), 1, -1), self.hidden)
        return F.log_softmax(self.hidden2tag(lstm_out.view(len(sentence), -1)), dim=1)


def tagger(steps=2):
    model = LSTMTagger()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(steps):
        model.zero_grad()
        reset_tagger(model)
        scores = model(torch.tensor([1, 2, 3]))
        F.nll_loss(scores, torch.tensor([0, 1, 2])).backward()
        optimizer.step()


def reset_tagger(model):
    for name in ("hidden",):
        setattr(model, name, model.init_hidden())


def main():
    word_language_model()
    evaluate(RNNModel(), torch.randint(0, 20, (11, 4)))
    init_hidden_each_batch()
    detached_cell()
    stateful_module_with_reset()
    truncated_bptt()
    detach_in_place_each_step()
    a3c_style()
    reinforce_env_loop()
    lbfgs_sequence()
    stored_attention()
    ema_under_no_grad()
    running_losses()
    generate()
    seq2seq_teacher_forcing()
    tagger()


if __name__ == "__main__":
    main()
