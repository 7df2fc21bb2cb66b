"""Checkpoints, resume, snapshots and exploits (pbt, pb2)."""

import os
import tempfile
import unittest

from budgetsweep import BadInput, Trial, checkpoint, write_atomically

from .helpers import contract_env


class CheckpointTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.root = self.dir.name

    def tearDown(self):
        self.dir.cleanup()

    def trial(self, name="t1", **env):
        base = contract_env(BUDGETSWEEP_CHECKPOINT_DIR=os.path.join(self.root, name),
                            BUDGETSWEEP_METRICS_PORT="")
        base.update(env)
        return Trial(environ=base, argv=[])

    def test_Resume_GoesOnFromTheLastCheckpoint(self):
        first = self.trial()
        self.assertIsNone(first.load_checkpoint())
        first.save_checkpoint({"weights": [1, 2]}, 1)
        first.save_checkpoint({"weights": [3, 4]}, 2)
        second = self.trial(BUDGETSWEEP_UNTIL="9")
        loaded = second.load_checkpoint()
        self.assertEqual(loaded.state, {"weights": [3, 4]})
        self.assertEqual(loaded.resource, 2)
        self.assertEqual(second.resumed_from, 2)
        self.assertEqual(second.registry.get("budgetsweep_trainer_resource_completed"), 2)
        self.assertEqual(os.listdir(os.path.join(self.root, "t1")), ["checkpoint.pkl"])

    def test_WriteAtomically_LeavesTheOldFileWhenTheWriterFails(self):
        path = os.path.join(self.root, "f")
        def writing(text):
            def write(temp):
                with open(temp, "w") as f:
                    f.write(text)
            return write

        write_atomically(path, writing("old"))

        def failing(temp):
            with open(temp, "w") as f:
                f.write("torn")
            raise RuntimeError("disk full")

        with self.assertRaises(RuntimeError):
            write_atomically(path, failing)
        with open(path) as f:
            self.assertEqual(f.read(), "old")
        self.assertEqual(os.listdir(self.root), ["f"])

    def test_ResumeWithOtherImmutableParams_ExitsTwoNamingTheFlag(self):
        self.trial().save_checkpoint({}, 1)
        other = self.trial(BUDGETSWEEP_PARAMS='{"lr": 0.1, "batch-size": 64, "optimizer": "adamw"}')
        with self.assertRaises(BadInput) as raised:
            other.load_checkpoint()
        self.assertIn("--lr", raised.exception.message)
        self.assertEqual(raised.exception.code, 2)

    def test_CorruptCheckpoint_ExitsTwoNamingTheFile(self):
        trial = self.trial()
        os.makedirs(trial.checkpoint_dir)
        with open(trial.checkpoint_path(), "wb") as f:
            f.write(b"not a pickle")
        with self.assertRaises(BadInput) as raised:
            trial.load_checkpoint()
        self.assertIn(trial.checkpoint_path(), raised.exception.message)

    def test_Snapshots_AreKeptAtUntilAndNeverRewritten(self):
        donor = self.trial("donor", BUDGETSWEEP_SNAPSHOTS="1", BUDGETSWEEP_MUTABLE="lr")
        donor.save_checkpoint({"w": "epoch2"}, 2)
        donor.save_checkpoint({"w": "epoch3"}, 3)
        snapshot = os.path.join(self.root, "donor", "snapshot-3.pkl")
        self.assertEqual(sorted(os.listdir(os.path.join(self.root, "donor"))),
                         ["checkpoint.pkl", "snapshot-3.pkl"])
        donor.save_checkpoint({"w": "retried"}, 3)
        self.assertEqual(checkpoint.load(snapshot).state, {"w": "epoch3"})

    def test_Exploit_StartsFromTheDonorsSnapshotOnce(self):
        donor_dir = os.path.join(self.root, "donor")
        donor = self.trial("donor", BUDGETSWEEP_SNAPSHOTS="1", BUDGETSWEEP_MUTABLE="lr")
        donor.save_checkpoint({"w": "donor@3"}, 3)
        self.trial("t1").save_checkpoint({"w": "own@1"}, 1)
        exploit = dict(BUDGETSWEEP_SNAPSHOTS="1", BUDGETSWEEP_MUTABLE="lr",
                       BUDGETSWEEP_EXPLOIT_DIR=donor_dir, BUDGETSWEEP_EXPLOIT_AT="3",
                       BUDGETSWEEP_UNTIL="5",
                       BUDGETSWEEP_PARAMS='{"lr": 0.01, "batch-size": 64, "optimizer": "adamw"}')
        recipient = self.trial("t1", **exploit)
        loaded = recipient.load_checkpoint()
        self.assertEqual((loaded.state, loaded.resource), ({"w": "donor@3"}, 3))
        self.assertEqual(loaded.origin, donor_dir + "@3")
        recipient.save_checkpoint({"w": "own@4"}, 4)
        # A later segment with the same exploit goes on from its own checkpoint.
        again = self.trial("t1", **exploit).load_checkpoint()
        self.assertEqual((again.state, again.resource, again.origin),
                         ({"w": "own@4"}, 4, donor_dir + "@3"))

    def test_ExploitOfAMissingSnapshot_ExitsTwoNamingIt(self):
        trial = self.trial(BUDGETSWEEP_EXPLOIT_DIR=os.path.join(self.root, "gone"),
                           BUDGETSWEEP_EXPLOIT_AT="3")
        with self.assertRaises(BadInput) as raised:
            trial.load_checkpoint()
        self.assertIn(os.path.join(self.root, "gone", "snapshot-3.pkl"), raised.exception.message)

    def test_ExploitChangingAnImmutableParam_ExitsTwo(self):
        donor = self.trial("donor", BUDGETSWEEP_SNAPSHOTS="1", BUDGETSWEEP_MUTABLE="lr")
        donor.save_checkpoint({}, 3)
        trial = self.trial(BUDGETSWEEP_MUTABLE="lr",
                           BUDGETSWEEP_EXPLOIT_DIR=os.path.join(self.root, "donor"),
                           BUDGETSWEEP_EXPLOIT_AT="3",
                           BUDGETSWEEP_PARAMS='{"lr": 0.003, "batch-size": 128, '
                                              '"optimizer": "adamw"}')
        with self.assertRaises(BadInput) as raised:
            trial.load_checkpoint()
        self.assertIn("--batch-size", raised.exception.message)


if __name__ == "__main__":
    unittest.main()
