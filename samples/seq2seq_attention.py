"""GRU encoder-decoder with attention that learns to reverse digit strings.

Written the way 0.3-era seq2seq tutorials and repos were: a pyramidal encoder
(adjacent time steps concatenated, so encoder lengths are `(lengths + 1) / 2`
on a LongTensor), an explicit ByteTensor padding mask for the attention
scores, a per-token masked loss (`reduce=False`), and a hand-written
Adam-with-weight-decay optimizer using the old `add_(scalar, tensor)` /
`addcmul_(value, t1, t2)` / `addcdiv_(value, t1, t2)` signatures.

    python seq2seq_attention.py
    python seq2seq_attention.py --iters 2000 --hidden 64
"""
from __future__ import print_function
import argparse
import math
import random

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd.variable import Variable

parser = argparse.ArgumentParser(description='seq2seq with attention on a toy reversal task')
parser.add_argument('--iters', type=int, default=40, help='training iterations')
parser.add_argument('--batch-size', type=int, default=16, help='batch size')
parser.add_argument('--hidden', type=int, default=32, help='hidden size')
parser.add_argument('--n-symbols', type=int, default=10, help='number of distinct digits')
parser.add_argument('--min-len', type=int, default=3, help='shortest source sequence')
parser.add_argument('--max-len', type=int, default=8, help='longest source sequence')
parser.add_argument('--lr', type=float, default=0.01, help='learning rate')
parser.add_argument('--weight-decay', type=float, default=1e-4, help='decoupled weight decay')
parser.add_argument('--clip', type=float, default=5.0, help='gradient clipping')
parser.add_argument('--teacher-forcing', type=float, default=0.5, help='teacher forcing ratio')
parser.add_argument('--seed', type=int, default=3, help='random seed')
parser.add_argument('--no-cuda', action='store_true', default=False, help='disables CUDA')
args = parser.parse_args()
args.cuda = not args.no_cuda and torch.cuda.is_available()

random.seed(args.seed)
torch.manual_seed(args.seed)
if args.cuda:
    torch.cuda.manual_seed(args.seed)

PAD_token = 0
SOS_token = 1
EOS_token = 2
n_tokens = 3 + args.n_symbols


def random_batch(batch_size):
    """src: S x B, tgt: (S + 1) x B (reversed src then EOS), lengths sorted descending."""
    lengths = sorted([random.randint(args.min_len, args.max_len) for _ in range(batch_size)],
                     reverse=True)
    max_len = lengths[0]
    src = torch.LongTensor(max_len, batch_size).fill_(PAD_token)
    tgt = torch.LongTensor(max_len + 1, batch_size).fill_(PAD_token)
    for b, l in enumerate(lengths):
        seq = [random.randint(3, n_tokens - 1) for _ in range(l)]
        src[:l, b] = torch.LongTensor(seq)
        tgt[:l, b] = torch.LongTensor(seq[::-1])
        tgt[l, b] = EOS_token
    return src, tgt, lengths


def padding_mask(lengths, max_len):
    """ByteTensor B x max_len, 1 on padded positions."""
    mask = torch.ByteTensor(lengths.size(0), max_len).zero_()
    for b in range(lengths.size(0)):
        if lengths[b] < max_len:
            mask[b, lengths[b]:] = 1
    return mask


def sequence_mask(lengths, max_len):
    """B x max_len, 1 inside each sequence (comparison result, a ByteTensor)."""
    batch_size = lengths.size(0)
    seq_range = torch.arange(0, max_len).long()
    seq_range_expand = seq_range.unsqueeze(0).expand(batch_size, max_len)
    if lengths.is_cuda:
        seq_range_expand = seq_range_expand.cuda()
    seq_length_expand = lengths.unsqueeze(1).expand_as(seq_range_expand)
    return seq_range_expand < seq_length_expand


class PyramidalEncoder(nn.Module):
    """GRU over the source, then every two adjacent outputs are merged into one."""

    def __init__(self, input_size, hidden_size):
        super(PyramidalEncoder, self).__init__()
        self.hidden_size = hidden_size
        self.embedding = nn.Embedding(input_size, hidden_size, padding_idx=PAD_token)
        self.gru = nn.GRU(hidden_size, hidden_size)
        self.reduce = nn.Linear(hidden_size * 2, hidden_size)

    def forward(self, src, lengths):
        embedded = self.embedding(src)
        packed = nn.utils.rnn.pack_padded_sequence(embedded, lengths)
        outputs, hidden = self.gru(packed)
        outputs, _ = nn.utils.rnn.pad_packed_sequence(outputs)
        T, B, H = outputs.size()
        if T % 2 == 1:
            outputs = torch.cat([outputs, Variable(outputs.data.new(1, B, H).zero_())], 0)
            T += 1
        outputs = outputs.transpose(0, 1).contiguous().view(B, T // 2, 2 * H).transpose(0, 1)
        outputs = F.tanh(self.reduce(outputs))
        return outputs, hidden


class Attn(nn.Module):
    """Additive (Bahdanau) attention."""

    def __init__(self, hidden_size):
        super(Attn, self).__init__()
        self.attn = nn.Linear(hidden_size * 2, hidden_size)
        self.v = nn.Parameter(torch.FloatTensor(hidden_size).uniform_(-0.1, 0.1))

    def forward(self, hidden, encoder_outputs, mask):
        # hidden: B x H, encoder_outputs: S x B x H, mask: B x S (1 = padding)
        h = hidden.unsqueeze(0).expand_as(encoder_outputs)
        energy = F.tanh(self.attn(torch.cat([h, encoder_outputs], 2)))
        scores = energy.matmul(self.v).t()
        scores.data.masked_fill_(mask, -float('inf'))
        return F.softmax(scores).unsqueeze(1)


class AttnDecoderRNN(nn.Module):
    def __init__(self, hidden_size, output_size):
        super(AttnDecoderRNN, self).__init__()
        self.embedding = nn.Embedding(output_size, hidden_size)
        self.gru = nn.GRU(hidden_size * 2, hidden_size)
        self.attn = Attn(hidden_size)
        self.out = nn.Linear(hidden_size * 2, output_size)

    def forward(self, input, last_context, last_hidden, encoder_outputs, mask):
        embedded = self.embedding(input).unsqueeze(0)
        rnn_input = torch.cat((embedded, last_context.unsqueeze(0)), 2)
        rnn_output, hidden = self.gru(rnn_input, last_hidden)
        rnn_output = rnn_output.squeeze(0)
        attn_weights = self.attn(rnn_output, encoder_outputs, mask)
        context = attn_weights.bmm(encoder_outputs.transpose(0, 1)).squeeze(1)
        output = F.log_softmax(self.out(torch.cat((rnn_output, context), 1)))
        return output, context, hidden, attn_weights


class AdamW(torch.optim.Optimizer):
    """Adam with decoupled weight decay (Loshchilov & Hutter), 2017-style implementation."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0):
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay)
        super(AdamW, self).__init__(params, defaults)

    def step(self, closure=None):
        loss = None
        if closure is not None:
            loss = closure()

        for group in self.param_groups:
            for p in group['params']:
                if p.grad is None:
                    continue
                grad = p.grad.data
                state = self.state[p]

                # State initialization
                if len(state) == 0:
                    state['step'] = 0
                    state['exp_avg'] = grad.new().resize_as_(grad).zero_()
                    state['exp_avg_sq'] = grad.new().resize_as_(grad).zero_()

                exp_avg, exp_avg_sq = state['exp_avg'], state['exp_avg_sq']
                beta1, beta2 = group['betas']

                state['step'] += 1

                # Decay the first and second moment running average coefficient
                exp_avg.mul_(beta1).add_(1 - beta1, grad)
                exp_avg_sq.mul_(beta2).addcmul_(1 - beta2, grad, grad)

                denom = exp_avg_sq.sqrt().add_(group['eps'])

                bias_correction1 = 1 - beta1 ** state['step']
                bias_correction2 = 1 - beta2 ** state['step']
                step_size = group['lr'] * math.sqrt(bias_correction2) / bias_correction1

                if group['weight_decay'] != 0:
                    p.data.add_(-group['weight_decay'] * group['lr'], p.data)
                p.data.addcdiv_(-step_size, exp_avg, denom)

        return loss


encoder = PyramidalEncoder(n_tokens, args.hidden)
decoder = AttnDecoderRNN(args.hidden, n_tokens)
for module in (encoder, decoder):
    for name, p in module.named_parameters():
        if name.endswith('weight') and p.dim() == 2 and 'embedding' not in name:
            nn.init.xavier_uniform(p)
if args.cuda:
    encoder.cuda()
    decoder.cuda()

params = list(encoder.parameters()) + list(decoder.parameters())
optimizer = AdamW(params, lr=args.lr, weight_decay=args.weight_decay)


def run_batch(src, tgt, lengths, teacher_forcing_ratio, volatile=False):
    """Returns (masked mean token loss, predictions T x B)."""
    src_lengths = torch.LongTensor(lengths)
    enc_lengths = (src_lengths + 1) / 2
    tgt_lengths = src_lengths + 1
    max_tgt_len = tgt.size(0)

    src_var = Variable(src, volatile=volatile)
    tgt_var = Variable(tgt, volatile=volatile)
    if args.cuda:
        src_var, tgt_var = src_var.cuda(), tgt_var.cuda()

    encoder_outputs, encoder_hidden = encoder(src_var, lengths)
    attn_mask = padding_mask(enc_lengths, encoder_outputs.size(0))
    loss_mask = sequence_mask(tgt_lengths, max_tgt_len).t()
    if args.cuda:
        attn_mask = attn_mask.cuda()
        loss_mask = loss_mask.type(torch.cuda.FloatTensor)
    else:
        loss_mask = loss_mask.type(torch.FloatTensor)
    loss_mask = Variable(loss_mask)

    batch_size = src.size(1)
    decoder_input = Variable(torch.LongTensor([SOS_token] * batch_size), volatile=volatile)
    decoder_context = Variable(torch.zeros(batch_size, args.hidden), volatile=volatile)
    if args.cuda:
        decoder_input, decoder_context = decoder_input.cuda(), decoder_context.cuda()
    decoder_hidden = encoder_hidden

    loss = 0
    predictions = []
    for t in range(max_tgt_len):
        decoder_output, decoder_context, decoder_hidden, _ = decoder(
            decoder_input, decoder_context, decoder_hidden, encoder_outputs, attn_mask)
        step_loss = F.nll_loss(decoder_output, tgt_var[t], reduce=False)
        loss += (step_loss * loss_mask[t]).sum()

        topv, topi = decoder_output.data.topk(1)
        predictions.append(topi.squeeze(1))
        if random.random() < teacher_forcing_ratio:
            decoder_input = tgt_var[t]
        else:
            decoder_input = Variable(topi.squeeze(1), volatile=volatile)

    loss = loss / loss_mask.sum()
    return loss, torch.stack(predictions)


def train_step(it):
    src, tgt, lengths = random_batch(args.batch_size)
    encoder.train()
    decoder.train()
    optimizer.zero_grad()
    loss, _ = run_batch(src, tgt, lengths, args.teacher_forcing)
    loss.backward()
    torch.nn.utils.clip_grad_norm(params, args.clip)
    optimizer.step()
    print('iter {} step {} loss {:.6f}'.format(it, it, loss.data[0]))


def evaluate(n_batches=2):
    encoder.eval()
    decoder.eval()
    correct = 0
    total = 0
    total_loss = 0
    for _ in range(n_batches):
        src, tgt, lengths = random_batch(args.batch_size)
        loss, pred = run_batch(src, tgt, lengths, 0.0, volatile=True)
        total_loss += loss.data[0]
        pred = pred.cpu()
        for b, l in enumerate(lengths):
            correct += int(pred[:l + 1, b].eq(tgt[:l + 1, b]).all())
            total += 1
    print('eval loss {:.6f} exact match {}/{}'.format(total_loss / n_batches, correct, total))


for it in range(args.iters):
    train_step(it)
evaluate()
