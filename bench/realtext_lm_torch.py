"""The real-text language model of sim/src/text/torch_lm_plugin.cpp in Python PyTorch, for
bench/realtext_lm_bench.cpp: the PyTorch-tutorial TransformerModel (JoMA decoder_wiki.py,
use_baseline=true) with a causal mask, Adam, clipping 0.5, one thread. Trains `--steps` minibatches on
the same synthetic token stream as the C++ side and prints `tokens_per_cpu_second <x>` (training steps
only, time.process_time, after `--warmup` untimed steps)."""
import argparse, math, time

import torch
import torch.nn as nn


class PositionalEncoding(nn.Module):
    def __init__(self, d, dropout, max_len=5000):
        super().__init__()
        self.drop = nn.Dropout(dropout)
        position = torch.arange(max_len).unsqueeze(1)
        div = torch.exp(torch.arange(0, d, 2) * (-math.log(10000.0) / d))
        pe = torch.zeros(max_len, 1, d)
        pe[:, 0, 0::2] = torch.sin(position * div)
        pe[:, 0, 1::2] = torch.cos(position * div)
        self.register_buffer("pe", pe)

    def forward(self, x):
        return self.drop(x + self.pe[: x.size(0)])


class LanguageModel(nn.Module):
    def __init__(self, vocabulary, emsize, layers, heads, dropout):
        super().__init__()
        self.emsize = emsize
        self.embedding = nn.Embedding(vocabulary, emsize)
        self.position = PositionalEncoding(emsize, dropout)
        self.layers = nn.ModuleList(
            [nn.TransformerEncoderLayer(emsize, heads, emsize, dropout) for _ in range(layers)])
        self.decoder = nn.Linear(emsize, vocabulary)
        self.embedding.weight.data.uniform_(-0.1, 0.1)
        self.decoder.weight.data.uniform_(-0.1, 0.1)
        self.decoder.bias.data.zero_()

    def forward(self, src, mask):
        h = self.position(self.embedding(src) * math.sqrt(self.emsize))
        for layer in self.layers:
            h = layer(h, mask)
        return self.decoder(h)


def synthetic_tokens(n, vocabulary):
    """xorshift64 ids, the same stream as realtext_lm_bench.cpp's."""
    x = 0x9E3779B97F4A7C15
    ids = []
    mask = (1 << 64) - 1
    for _ in range(n):
        x ^= (x << 13) & mask
        x ^= x >> 7
        x ^= (x << 17) & mask
        ids.append(x % vocabulary)
    return torch.tensor(ids, dtype=torch.long)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--vocabulary", type=int, default=2001)
    p.add_argument("--emsize", type=int, default=200)
    p.add_argument("--layers", type=int, default=1)
    p.add_argument("--heads", type=int, default=1)
    p.add_argument("--dropout", type=float, default=0.2)
    p.add_argument("--bptt", type=int, default=35)
    p.add_argument("--batch", type=int, default=20)
    p.add_argument("--steps", type=int, default=100)
    p.add_argument("--warmup", type=int, default=5)
    a = p.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(1)
    model = LanguageModel(a.vocabulary, a.emsize, a.layers, a.heads, a.dropout)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
    rows = a.bptt * (a.steps + a.warmup) + 1
    data = synthetic_tokens(rows * a.batch, a.vocabulary).view(a.batch, rows).t().contiguous()
    mask = torch.triu(torch.full((a.bptt, a.bptt), float("-inf")), 1)
    criterion = nn.CrossEntropyLoss()
    model.train()
    cpu = 0.0
    for step in range(a.steps + a.warmup):
        start = time.process_time()
        i = step * a.bptt
        x, y = data[i:i + a.bptt], data[i + 1:i + 1 + a.bptt]
        out = model(x, mask)
        loss = criterion(out.view(-1, a.vocabulary), y.reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
        optimizer.step()
        loss.item()
        if step >= a.warmup:
            cpu += time.process_time() - start
    print(f"tokens_per_cpu_second {a.steps * a.bptt * a.batch / cpu:.1f}")
    print(f"torch {torch.__version__} threads {torch.get_num_threads()}")


if __name__ == "__main__":
    main()
