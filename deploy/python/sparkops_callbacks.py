"""Checkpoint hooks for `sparkops run --checkpoint-signal`: save when the pool runs low, then say so.

`sparkops run --checkpoint-signal USR1 ...` starts the job with two variables:
  SPARKOPS_CHECKPOINT_SIGNAL  the signal's name (SIGUSR1)
  SPARKOPS_CHECKPOINT_DONE    the file to create once the checkpoint is saved
When MemAvailable first falls under the checkpoint level, `run` sends the signal once to each process
of the job that catches it. The handler here only sets a flag; the callback saves at the next step
boundary and then creates the file, and `run`'s memory guard holds its stop until then (at most
--checkpoint-grace seconds, while MemAvailable stays above half the floor).

Hugging Face:  trainer = Trainer(..., callbacks=[sparkops_callbacks.hf_callback()])
Lightning:     trainer = L.Trainer(..., callbacks=[sparkops_callbacks.lightning_callback()])
A plain loop:  sparkops_callbacks.install()
               for step, batch in enumerate(loader):
                   ...
                   if sparkops_callbacks.requested():
                       save(...)
                       sparkops_callbacks.acknowledge()

Only the standard library is imported here; each framework is imported by the function that needs it.
One process per GPU is assumed (a DGX Spark has one): under several ranks each rank saves when its
own signal arrives, which may be at different steps.
"""
import os
import signal
import threading

_requested = threading.Event()


def install(sig_name=None):
    """Installs the handler for the signal `run` named (or `sig_name`); False when there is none."""
    name = sig_name or os.environ.get("SPARKOPS_CHECKPOINT_SIGNAL", "")
    if not name:
        return False
    name = name.upper()
    sig = getattr(signal, name if name.startswith("SIG") else "SIG" + name, None)
    if not isinstance(sig, signal.Signals):
        raise ValueError("sparkops_callbacks: unknown signal %r" % name)
    signal.signal(sig, lambda _signum, _frame: _requested.set())
    return True


def requested():
    """True once the signal arrived and the checkpoint was not yet acknowledged."""
    return _requested.is_set()


def acknowledge():
    """Creates the SPARKOPS_CHECKPOINT_DONE file (atomically) and clears the request."""
    _requested.clear()
    path = os.environ.get("SPARKOPS_CHECKPOINT_DONE")
    if not path:
        return
    tmp = "%s.tmp.%d" % (path, os.getpid())
    with open(tmp, "w") as f:
        f.write("saved\n")
    os.replace(tmp, path)


def hf_callback():
    """A transformers TrainerCallback: on the signal, saves at the next step end, then acknowledges."""
    from transformers import TrainerCallback

    class SparkopsCheckpoint(TrainerCallback):
        def __init__(self):
            self._pending = False
            install()

        def on_step_end(self, args, state, control, **kwargs):
            if requested() and not self._pending:
                control.should_save = True
                self._pending = True
            return control

        def on_save(self, args, state, control, **kwargs):
            if self._pending:
                self._pending = False
                acknowledge()
            return control

    return SparkopsCheckpoint()


def lightning_callback(dirpath=None):
    """A Lightning Callback: on the signal, trainer.save_checkpoint at the next batch end, then acknowledges."""
    try:
        from lightning.pytorch.callbacks import Callback
    except ImportError:
        from pytorch_lightning.callbacks import Callback

    class SparkopsCheckpoint(Callback):
        def __init__(self):
            super().__init__()
            install()

        def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
            if not requested():
                return
            where = dirpath or getattr(trainer, "default_root_dir", ".")
            trainer.save_checkpoint(os.path.join(where, "sparkops-step%d.ckpt" % trainer.global_step))
            acknowledge()

    return SparkopsCheckpoint()
