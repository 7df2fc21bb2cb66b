"""A minimal training loop on the SDK, run as a child process by test_process.py.

Own flags: --seconds-per-step=S (0.02), --steps-per-epoch=N (5), --diverge-at=E.
"""

import math
import time

import budgetsweep


def main() -> None:
    with budgetsweep.Trial(max_resource=3, linger_seconds=0.5) as trial:
        seconds = trial.param("seconds-per-step", 0.02, float)
        steps = trial.param("steps-per-epoch", 5, int)
        diverge_at = trial.param("diverge-at", None, int)
        lr = trial.param("lr", 0.01, float)
        restored = trial.load_checkpoint()
        epoch = int(restored.resource) if restored else 0
        print("starting at %d until %s" % (epoch, trial.until), flush=True)
        while trial.should_train(epoch):
            for _ in trial.meter.batches(range(steps)):
                time.sleep(seconds)
                trial.meter.step(32)
                if trial.should_stop:
                    break
            else:
                epoch += 1
                loss = math.nan if epoch == diverge_at else 1.0 / (epoch + lr)
                trial.report(epoch, train_loss=loss, validation_accuracy=1 - loss / 2)
                trial.save_checkpoint({"epoch": epoch}, epoch)
                print("epoch %d" % epoch, flush=True)
        if trial.should_stop:
            trial.save_checkpoint({"epoch": epoch}, epoch)
            print("probed" if trial.probe_done else "stopped at %d" % epoch, flush=True)


if __name__ == "__main__":
    main()
