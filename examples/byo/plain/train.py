#!/usr/bin/env python3
"""A training script that knows nothing of budgetsweep: a small MLP on a slice of Fashion-MNIST.

It takes its settings as flags, trains for --epochs and after each epoch prints one line,
`epoch=N accuracy=X loss=Y`, or with --metrics-file appends the same values to that file as a JSON
object per line. That is all a sweep with a StdOut or File collector needs
(docs/byo.md): budgetsweep-collect reads the values, ASHA stops the weak trials at its rungs.

  python3 examples/byo/plain/train.py --lr=0.003 --epochs=3

Flags: --lr (0.003), --weight-decay (0.01), --batch-size (64), --epochs (9), --hidden (128),
--seed (0), --train-limit (4000 training samples), --validation-size (1000: the samples after
those), --data-dir (Debian's dataset-fashion-mnist), --threads (1), --metrics-file (none).
"""

import argparse
import gzip
import json
import struct

import torch
import torch.nn.functional as F


def fashion_mnist(data_dir: str, part: str, count: int) -> torch.Tensor:
    """The first `count` records of one of the dataset's gzip IDX files."""
    with gzip.open("%s/train-%s-idx%d-ubyte.gz" % (data_dir, part, 3 if part == "images" else 1),
                   "rb") as f:
        header = f.read(4)
        rank = header[3]
        shape = struct.unpack(">%dI" % rank, f.read(4 * rank))
        count = min(count, shape[0])
        record = 1
        for size in shape[1:]:
            record *= size
        raw = bytearray(f.read(count * record))
    return torch.frombuffer(raw, dtype=torch.uint8).reshape(count, *shape[1:])


def flags() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--weight-decay", type=float, default=1e-2)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--epochs", type=int, default=9)
    p.add_argument("--hidden", type=int, default=128)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--train-limit", type=int, default=4000)
    p.add_argument("--validation-size", type=int, default=1000)
    p.add_argument("--data-dir", default="/usr/share/datasets/fashion-mnist")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--metrics-file", default="")
    return p.parse_args()


def main() -> None:
    a = flags()
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    total = a.train_limit + a.validation_size
    x = fashion_mnist(a.data_dir, "images", total).reshape(-1, 784).float() / 255
    y = fashion_mnist(a.data_dir, "labels", total).long()
    x_train, y_train, x_val, y_val = x[:a.train_limit], y[:a.train_limit], x[a.train_limit:], y[a.train_limit:]
    model = torch.nn.Sequential(torch.nn.Linear(784, a.hidden), torch.nn.ReLU(),
                                torch.nn.Linear(a.hidden, 10))
    optimizer = torch.optim.AdamW(model.parameters(), lr=a.lr, weight_decay=a.weight_decay)
    for epoch in range(1, a.epochs + 1):
        model.train()
        for batch in torch.randperm(len(x_train)).split(a.batch_size):
            optimizer.zero_grad()
            F.cross_entropy(model(x_train[batch]), y_train[batch]).backward()
            optimizer.step()
        model.eval()
        with torch.no_grad():
            logits = model(x_val)
        accuracy = (logits.argmax(1) == y_val).float().mean().item()
        loss = F.cross_entropy(logits, y_val).item()
        if a.metrics_file:
            with open(a.metrics_file, "a") as out:
                out.write(json.dumps({"epoch": epoch, "accuracy": accuracy, "loss": loss}) + "\n")
        else:
            print("epoch=%d accuracy=%.4f loss=%.4f" % (epoch, accuracy, loss), flush=True)


if __name__ == "__main__":
    main()
