#!/usr/bin/env python3
"""A bring-your-own trainer on the budgetsweep Python SDK: a small MLP on a slice of Fashion-MNIST.

Runs by hand (`PYTHONPATH=sdk/python python3 examples/byo/sdk/train.py --lr=0.003`: 9 epochs, no
checkpoints) or as a sweep's trial (examples/byo/sdk/sweep.yaml), where the SDK supplies the
parameters, UNTIL, the checkpoint directory, the metrics endpoint, SIGTERM and probe mode.

Search parameters: --lr, --weight-decay, --warmup-fraction, --batch-size, --accumulation-steps,
and the throughput probe's --workers, --prefetch, --precision, --lr-scaling, --reference-batch.
Own flags: --data-dir (Debian's dataset-fashion-mnist), --train-limit=4000 (training samples),
--validation-size=1000 (the samples after those: the objective), --hidden=128, --seed=0,
--threads=1 (intra-op threads; one per trial when trials share a machine).
"""

import gzip
import struct

import torch
import torch.nn.functional as F

import budgetsweep
from budgetsweep import torch as bsw_torch

MEAN, STD = 0.2860, 0.3530  # Fashion-MNIST's pixel statistics


def read_idx(path: str, count: int) -> torch.Tensor:
    """The first `count` items of a gzip IDX file (decompressing only those)."""
    with gzip.open(path, "rb") as f:
        magic = struct.unpack(">I", f.read(4))[0]
        dims = struct.unpack(">" + "I" * (magic & 0xFF), f.read(4 * (magic & 0xFF)))
        item = 1
        for d in dims[1:]:
            item *= d
        count = min(count, dims[0])
        data = f.read(count * item)
    return torch.frombuffer(bytearray(data), dtype=torch.uint8).reshape(count, *dims[1:])


def load_data(data_dir: str, train: int, validation: int):
    images = read_idx(data_dir + "/train-images-idx3-ubyte.gz", train + validation)
    labels = read_idx(data_dir + "/train-labels-idx1-ubyte.gz", train + validation).long()
    x = (images.reshape(len(images), -1).float() / 255 - MEAN) / STD
    return (x[:train], labels[:train]), (x[train:], labels[train:])


def main() -> None:
    with budgetsweep.Trial(max_resource=9, checkpoint_name="checkpoint.pt") as trial:
        torch.set_num_threads(trial.param("threads", 1, int))
        seed = trial.param("seed", 0, int)
        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        (x_train, y_train), (x_val, y_val) = load_data(
            trial.param("data-dir", "/usr/share/datasets/fashion-mnist", str),
            trial.param("train-limit", 4000, int), trial.param("validation-size", 1000, int))
        batch = bsw_torch.batch_settings(trial, default_batch_size=64)
        order = torch.Generator()
        loader = torch.utils.data.DataLoader(
            torch.utils.data.TensorDataset(x_train, y_train), batch_size=batch["batch_size"],
            shuffle=True, generator=order, **bsw_torch.loader_settings(trial, device=device))

        torch.manual_seed(seed)
        hidden = trial.param("hidden", 128, int)
        model = torch.nn.Sequential(torch.nn.Linear(784, hidden), torch.nn.ReLU(),
                                    torch.nn.Linear(hidden, 10)).to(device)
        peak = bsw_torch.scaled_lr(trial, trial.param("lr", 3e-3, float), default_batch_size=64)
        weight_decay = trial.param("weight-decay", 1e-2, float)
        optimizer = torch.optim.AdamW(model.parameters(), lr=peak, weight_decay=weight_decay)
        precision = bsw_torch.Precision.from_trial(trial, device, default="fp32")
        accumulation = bsw_torch.GradientAccumulation(batch["accumulation_steps"], len(loader))
        schedule = bsw_torch.WarmupCosine(
            peak, accumulation.steps_per_epoch * int(trial.max_resource),
            warmup_fraction=trial.param("warmup-fraction", 0.05, float))

        epoch, step = 0, 0
        start = trial.load_checkpoint(load=torch.load)
        if start is not None:
            model.load_state_dict(start.state["model"])
            optimizer.load_state_dict(start.state["optimizer"])
            for group in optimizer.param_groups:  # after an exploit, this trial's values (the
                group["weight_decay"] = weight_decay  # schedule sets the lr at every step)
            precision.load_state_dict(start.state["precision"])
            epoch, step = int(start.resource), start.state["step"]
            print("resumed at epoch %d" % epoch, flush=True)

        while trial.should_train(epoch):
            order.manual_seed(seed * 100003 + epoch)  # the same batches after a resume
            model.train()
            for micro_batch, (x, y) in enumerate(trial.meter.batches(loader)):
                x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
                with precision.autocast():
                    loss = F.cross_entropy(model(x), y)
                precision.backward(accumulation.scale(loss, micro_batch))
                ends_step = accumulation.ends_step(micro_batch)
                if ends_step:
                    schedule.apply(optimizer, step)
                    precision.step(optimizer)
                    step += 1
                trial.meter.step(len(x), optimizer_step=ends_step)
                trial.set_loss(loss.item())  # a NaN loss exits 3 (Diverged)
                if trial.should_stop:
                    break
            else:
                epoch += 1
                model.eval()
                with torch.no_grad():
                    logits = model(x_val.to(device)).float()
                accuracy = (logits.argmax(1).cpu() == y_val).float().mean().item()
                samples_per_second = trial.meter.samples_per_second  # report() starts it afresh
                trial.report(epoch, learning_rate=schedule.lr_at(max(0, step - 1)),
                             validation_accuracy=accuracy,
                             validation_loss=F.cross_entropy(logits.cpu(), y_val).item())
                trial.save_checkpoint({"model": model.state_dict(),
                                       "optimizer": optimizer.state_dict(),
                                       "precision": precision.state_dict(), "step": step},
                                      epoch, save=torch.save)
                print("epoch %d/%s validation_accuracy=%.4f samples_per_second=%.0f"
                      % (epoch, trial.max_resource, accuracy, samples_per_second),
                      flush=True)
        if trial.probe_done:
            print("probe: %d steps measured" % trial.probe_steps, flush=True)
        elif trial.should_stop:
            # The checkpoint of the last whole epoch stands; the partial epoch runs again.
            print("stopped during epoch %d; checkpoint at epoch %d" % (epoch + 1, epoch),
                  flush=True)


if __name__ == "__main__":
    main()
