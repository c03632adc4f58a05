"""deploy/python/sparkops_callbacks.py with stand-in transformers and Lightning modules (standard library only).

Usage: callbacks_test.py DEPLOY_PYTHON_DIR
"""
import os
import signal
import sys
import tempfile
import types
import unittest

sys.path.insert(0, sys.argv.pop(1))
import sparkops_callbacks as sc  # noqa: E402


class Control:
    should_save = False


class HF(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()
        os.environ["SPARKOPS_CHECKPOINT_SIGNAL"] = "SIGUSR1"
        os.environ["SPARKOPS_CHECKPOINT_DONE"] = os.path.join(self.dir, "checkpoint.done")
        fake = types.ModuleType("transformers")
        fake.TrainerCallback = type("TrainerCallback", (), {})
        sys.modules["transformers"] = fake

    def test_saves_at_the_next_step_then_acknowledges(self):
        cb = sc.hf_callback()
        control = Control()
        cb.on_step_end(None, None, control)
        self.assertFalse(control.should_save)  # nothing asked yet
        os.kill(os.getpid(), signal.SIGUSR1)
        self.assertTrue(sc.requested())
        cb.on_step_end(None, None, control)
        self.assertTrue(control.should_save)
        self.assertFalse(os.path.exists(os.environ["SPARKOPS_CHECKPOINT_DONE"]))  # not before the save
        cb.on_save(None, None, control)
        self.assertTrue(os.path.exists(os.environ["SPARKOPS_CHECKPOINT_DONE"]))
        self.assertFalse(sc.requested())
        self.assertEqual([f for f in os.listdir(self.dir) if ".tmp." in f], [])


class Lightning(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()
        os.environ["SPARKOPS_CHECKPOINT_SIGNAL"] = "USR2"
        os.environ["SPARKOPS_CHECKPOINT_DONE"] = os.path.join(self.dir, "checkpoint.done")
        for name in ("lightning", "lightning.pytorch", "lightning.pytorch.callbacks"):
            sys.modules[name] = types.ModuleType(name)
        sys.modules["lightning.pytorch.callbacks"].Callback = type("Callback", (), {})

    def test_save_checkpoint_then_acknowledge(self):
        saved = []

        class Trainer:
            global_step = 41
            default_root_dir = self.dir

            def save_checkpoint(self, path):
                saved.append(path)
                open(path, "w").close()

        cb = sc.lightning_callback()
        cb.on_train_batch_end(Trainer(), None, None, None, 0)
        self.assertEqual(saved, [])
        os.kill(os.getpid(), signal.SIGUSR2)
        cb.on_train_batch_end(Trainer(), None, None, None, 1)
        self.assertEqual(saved, [os.path.join(self.dir, "sparkops-step41.ckpt")])
        self.assertTrue(os.path.exists(os.environ["SPARKOPS_CHECKPOINT_DONE"]))


class Plain(unittest.TestCase):
    def test_without_the_variable_nothing_is_installed(self):
        os.environ.pop("SPARKOPS_CHECKPOINT_SIGNAL", None)
        self.assertFalse(sc.install())
        with self.assertRaises(ValueError):
            sc.install("NOPE")

    def test_importing_pulls_in_no_framework(self):
        code = ("import sys; sys.path.insert(0, %r); import sparkops_callbacks; "
                "bad = [m for m in ('torch', 'transformers', 'lightning', 'numpy') if m in sys.modules]; "
                "sys.exit(1 if bad else 0)") % os.path.dirname(sc.__file__)
        self.assertEqual(os.system("%s -c %r" % (sys.executable, code)) >> 8, 0)


if __name__ == "__main__":
    unittest.main()
