"""Benchmark 1, PyTorch side: cnn2 on Fashion-MNIST with torch.utils.data.DataLoader.

Trains the same network as budgetsweep-trainer's cnn2 (AdamW, warmup+cosine, same precision and
threads) for one epoch on the first --train-limit samples and prints one JSON line per DataLoader
setting tried, then the best. Runs on Debian's python3-torch 1.13 (run.sh) and on the pinned PyPI
wheel (current.sh, bench/gpu/run.sh); needs only torch and numpy.
"""
import argparse
import gzip
import json
import math
import time

import numpy as np
import torch
from torch import nn

MEAN, STD = 0.2860, 0.3530


def read_idx(path, header):
    with gzip.open(path, "rb") as f:
        return np.frombuffer(f.read(), dtype=np.uint8, offset=header)


class Cnn2(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(32, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(), nn.MaxPool2d(2),
            nn.Flatten())
        self.classifier = nn.Sequential(nn.Linear(3136, 128), nn.ReLU(), nn.Linear(128, 10))

    def forward(self, x):
        return self.classifier(self.features(x))


def train_flops_per_sample():
    """Forward and backward FLOPs of one training sample, as PyTorch's FlopCounterMode counts
    them (matrix products and convolutions)."""
    from torch.utils.flop_counter import FlopCounterMode
    model, batch = Cnn2(), 64
    x, y = torch.randn(batch, 1, 28, 28), torch.randint(0, 10, (batch,))
    with FlopCounterMode(display=False) as counter:
        nn.functional.cross_entropy(model(x), y).backward()
    return counter.get_total_flops() / batch


def run(images, labels, args, workers):
    torch.manual_seed(args.seed)
    dataset = torch.utils.data.TensorDataset(images, labels)
    cuda = args.device == "cuda"
    # prefetch_factor only with workers: 1.13 wants its default there, 2.x wants None.
    background = {"persistent_workers": True, "prefetch_factor": 4} if workers > 0 else {}
    loader = torch.utils.data.DataLoader(
        dataset, batch_size=args.batch_size, shuffle=True, num_workers=workers, pin_memory=cuda,
        **background)
    model = Cnn2().to(args.device)
    if args.channels_last:
        model = model.to(memory_format=torch.channels_last)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
    steps = len(loader) * args.epochs
    warmup = round(0.05 * steps)

    def lr_at(s):
        if s < warmup:
            return 1e-3 * (s + 1) / warmup
        p = min(1.0, (s - warmup) / max(1, steps - warmup - 1))
        return 1e-5 + (1e-3 - 1e-5) * 0.5 * (1 + math.cos(math.pi * p))

    autocast = args.precision == "bf16"
    model.train()
    step = 0
    for _ in range(args.epochs):
        if cuda:
            torch.cuda.synchronize()
        seen, start = 0, time.perf_counter()  # the rate is the last epoch's
        for x, y in loader:
            for g in opt.param_groups:
                g["lr"] = lr_at(step)
            x, y = x.to(args.device, non_blocking=True), y.to(args.device, non_blocking=True)
            if args.channels_last:
                x = x.contiguous(memory_format=torch.channels_last)
            with torch.autocast(args.device, dtype=torch.bfloat16, enabled=autocast):
                logits = model(x)
            loss = nn.functional.cross_entropy(logits.float(), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            loss.item()
            seen += x.shape[0]
            step += 1
        if cuda:
            torch.cuda.synchronize()
        seconds = time.perf_counter() - start
    return {"workers": workers, "samples_per_second": seen / seconds, "seconds": seconds}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--data-dir", default="/usr/share/datasets/fashion-mnist")
    p.add_argument("--train-limit", type=int, default=20000)
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--precision", choices=["bf16", "fp32"], default="bf16")
    p.add_argument("--workers", default="0,1,2")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--channels-last", action="store_true")
    p.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    p.add_argument("--epochs", type=int, default=1, help="the rate is the last epoch's")
    p.add_argument("--count-flops", action="store_true",
                   help="print the training FLOPs per sample (forward + backward) and exit")
    args = p.parse_args()
    torch.set_num_threads(args.threads)
    if args.count_flops:
        print(json.dumps({"side": "pytorch", "train_flops_per_sample": train_flops_per_sample()}))
        return
    raw = read_idx(f"{args.data_dir}/train-images-idx3-ubyte.gz", 16).reshape(-1, 1, 28, 28)
    lab = read_idx(f"{args.data_dir}/train-labels-idx1-ubyte.gz", 8)
    images = (torch.from_numpy(raw[: args.train_limit].copy()).float() / 255.0 - MEAN) / STD
    labels = torch.from_numpy(lab[: args.train_limit].astype(np.int64))
    results = [run(images, labels, args, int(w)) for w in args.workers.split(",")]
    for r in results:
        print(json.dumps({"side": "pytorch", "precision": args.precision,
                          "channels_last": args.channels_last, **r}))
    best = max(results, key=lambda r: r["samples_per_second"])
    print(json.dumps({"side": "pytorch", "precision": args.precision,
                      "channels_last": args.channels_last, "best": True, **best}))


if __name__ == "__main__":
    main()
