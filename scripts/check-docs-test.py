#!/usr/bin/env python3
"""scripts/check-docs.py on a made-up repository: each kind of fault is reported with its file and
line, and pages without one pass."""
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

CHECK = Path(__file__).resolve().parent / "check-docs.py"

CMAKE = """\
function(my_wrapper name script)
  add_test(NAME ${name} COMMAND ${script})
endfunction()
add_test(NAME plain_test COMMAND true)
foreach(t alpha beta)
  add_test(NAME loop_${t} COMMAND "echo (unbalanced")
endforeach()
my_wrapper(wrapped_test run.sh)
"""

GOOD_README = """\
# Project

See [the guide](docs/guide.md#set-up-the-tools), [its second Notes](docs/guide.md#notes-1),
[here](#project), [a site](https://example.com/missing) and `[code](nowhere.md)`.

<!-- run by: loop_beta -->
```sh
make
```

<!-- not run: needs a cluster -->
```console
$ kubectl get pods
```

```yaml
not: shell
```
"""

GUIDE = """\
# Guide

## Set up the tools!

## Notes

## Notes

```text
# not a heading: inside a block
```
"""


class CheckDocsTest(unittest.TestCase):
    def run_check(self, readme, guide=GUIDE):
        with tempfile.TemporaryDirectory() as directory:
            root = Path(directory)
            (root / "docs").mkdir()
            (root / "tests").mkdir()
            (root / "tests" / "CMakeLists.txt").write_text(CMAKE)
            (root / "README.md").write_text(readme)
            (root / "docs" / "guide.md").write_text(guide)
            result = subprocess.run([sys.executable, str(CHECK), "--root", str(root)],
                                    capture_output=True, text=True, check=False)
        return result.returncode, result.stdout

    def test_pages_without_a_fault_pass(self):
        code, out = self.run_check(GOOD_README)
        self.assertEqual(code, 0, out)

    def test_wrapped_and_looped_tests_count_as_registered(self):
        for name in ("plain_test", "loop_alpha", "wrapped_test"):
            code, out = self.run_check(GOOD_README.replace("loop_beta", name))
            self.assertEqual(code, 0, f"{name}: {out}")

    def test_a_link_to_a_missing_file_names_the_line(self):
        code, out = self.run_check(GOOD_README + "\nSee [gone](docs/gone.md).\n")
        self.assertEqual(code, 1)
        self.assertIn("README.md:20: link to docs/gone.md: docs/gone.md does not exist", out)

    def test_a_missing_anchor_is_reported(self):
        code, out = self.run_check(GOOD_README + "\n[x](docs/guide.md#set-up-the-tools-1)\n"
                                   "[y](#not-here)\n[z](docs/guide.md#not-a-heading-inside-a-block)\n")
        self.assertEqual(code, 1)
        self.assertIn("README.md:20: link to docs/guide.md#set-up-the-tools-1: no heading", out)
        self.assertIn("README.md:21: link to #not-here: no heading of README.md", out)
        self.assertIn("README.md:22: link to docs/guide.md#not-a-heading-inside-a-block", out)

    def test_an_unmarked_shell_block_is_reported(self):
        code, out = self.run_check(GOOD_README.replace("<!-- not run: needs a cluster -->\n", ""))
        self.assertEqual(code, 1)
        self.assertIn("README.md:11: the console block is marked neither", out)

    def test_a_block_run_by_an_unregistered_test_is_reported(self):
        code, out = self.run_check(GOOD_README.replace("loop_beta", "loop_gamma"))
        self.assertEqual(code, 1)
        self.assertIn("README.md:7: the sh block is marked run by loop_gamma, which no", out)

    def test_a_not_run_mark_needs_a_reason_and_must_touch_the_fence(self):
        code, out = self.run_check(GOOD_README.replace("not run: needs a cluster", "not run:"))
        self.assertEqual(code, 1)
        self.assertIn("README.md:12: the console block is marked neither", out)
        code, out = self.run_check(GOOD_README.replace("a cluster -->\n", "a cluster -->\n\n"))
        self.assertEqual(code, 1)
        self.assertIn("README.md:13: the console block is marked neither", out)

    def test_faults_in_docs_pages_are_reported_too(self):
        code, out = self.run_check(GOOD_README, GUIDE + "\n```bash\nls\n```\n[a](../nope.md)\n")
        self.assertEqual(code, 1)
        self.assertIn("docs/guide.md:13: the bash block is marked neither", out)
        self.assertIn("docs/guide.md:16: link to ../nope.md: ../nope.md does not exist", out)


if __name__ == "__main__":
    unittest.main()
