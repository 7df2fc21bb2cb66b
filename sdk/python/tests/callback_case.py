"""What test_hf.py and test_lightning.py share: a trial of three epochs (milestones 1, 2, 3) whose
checkpoint directory is a temporary folder."""

import os
import tempfile
import unittest
from typing import Dict, List

from budgetsweep import Trial, contract

from .helpers import Sample, contract_env


class CallbackCase(unittest.TestCase):
    checkpoint_name = "checkpoint.pkl"  # the framework's: a tar file, a Lightning checkpoint

    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.ckpt = os.path.join(self.dir.name, "ckpt")

    def tearDown(self):
        self.dir.cleanup()

    def trial(self, until: int) -> Trial:
        env = contract_env(BUDGETSWEEP_CHECKPOINT_DIR=self.ckpt, BUDGETSWEEP_UNTIL=str(until),
                           BUDGETSWEEP_MAX_RESOURCE="3", BUDGETSWEEP_MILESTONES="1,2,3")
        return Trial(environ=env, argv=[], linger_seconds=0, checkpoint_name=self.checkpoint_name)

    @staticmethod
    def validation_losses(samples: List[Sample]) -> Dict[str, float]:
        """The scraped validation_loss objectives by their resource label."""
        return {labels[contract.LABEL_RESOURCE]: value for name, labels, value in samples
                if name == contract.METRIC_OBJECTIVE
                and labels[contract.LABEL_METRIC] == "validation_loss"}
