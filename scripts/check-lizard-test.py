#!/usr/bin/env python3
"""scripts/check-lizard.py on a made-up operator/: a long function and a branchy one fail it by name
unless listed, a stale or unexplained entry fails it, and --write-allow-list keeps the reasons."""
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

CHECK = Path(__file__).resolve().parent / "check-lizard.py"

# Long: 65 lines. Branchy: cyclomatic complexity 17. Short: within both limits.
SOURCE = ("int Long(int x) {\n" + "  x += 1;\n" * 62 + "  return x;\n}\n\n"
          "int Branchy(int x) {\n" + "".join(f"  if (x == {i}) return {i};\n" for i in range(16)) +
          "  return -1;\n}\n\nint Short(int x) { return x; }\n")


class CheckLizardTest(unittest.TestCase):
    def run_check(self, allow_list, *flags):
        with tempfile.TemporaryDirectory() as directory:
            root = Path(directory)
            (root / "operator").mkdir()
            (root / "operator" / "units.cc").write_text(SOURCE)
            (root / "allow.txt").write_text(allow_list)
            result = subprocess.run([sys.executable, str(CHECK), "--root", str(root),
                                     "--allow-list", str(root / "allow.txt"), *flags],
                                    capture_output=True, text=True, check=False)
            return result.returncode, result.stdout, (root / "allow.txt").read_text()

    def test_unlisted_functions_over_the_limits_fail_by_name(self):
        code, out, _ = self.run_check("")
        self.assertEqual(code, 1, out)
        self.assertIn("operator/units.cc:1: Long: 65 lines, cyclomatic complexity 1:", out)
        self.assertIn("operator/units.cc:67: Branchy: 19 lines, cyclomatic complexity 17:", out)
        self.assertNotIn("Short", out)

    def test_listed_functions_pass(self):
        code, out, _ = self.run_check("# a comment\noperator/units.cc:Long  # table-like\n"
                                      "operator/units.cc:Branchy  # not split yet\n")
        self.assertEqual(code, 0, out)

    def test_an_entry_within_the_limits_fails(self):
        code, out, _ = self.run_check("operator/units.cc:Long  # table-like\n"
                                      "operator/units.cc:Branchy  # not split yet\n"
                                      "operator/units.cc:Short  # split since\n")
        self.assertEqual(code, 1, out)
        self.assertIn("allow.txt:3: operator/units.cc:Short: within the limits now", out)

    def test_an_entry_without_a_reason_fails(self):
        code, out, _ = self.run_check("operator/units.cc:Long\n"
                                      "operator/units.cc:Branchy  # not split yet\n")
        self.assertEqual(code, 1, out)
        self.assertIn("allow.txt:1: operator/units.cc:Long: no reason", out)

    def test_writing_the_list_keeps_reasons_and_drops_stale_entries(self):
        code, out, written = self.run_check("operator/units.cc:Long  # table-like\n"
                                            "operator/units.cc:Short  # split since\n",
                                            "--write-allow-list", "--reason", "to split")
        self.assertEqual(code, 0, out)
        entries = [line for line in written.splitlines() if not line.startswith("#")]
        self.assertEqual(entries, ["operator/units.cc:Branchy  # to split",
                                   "operator/units.cc:Long  # table-like"])
        code, out, _ = self.run_check(written)
        self.assertEqual(code, 0, out)


if __name__ == "__main__":
    unittest.main()
