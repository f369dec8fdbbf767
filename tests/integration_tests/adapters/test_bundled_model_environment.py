"""Loading the bundled model leaves its host as it was: no environment variable set,
Hugging Face's offline switch untouched, and nothing asked of the network."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]

# In a fresh Python without any offline setting: load the model through every path a
# user has (the path alone, LangChain's and LlamaIndex's defaults, the CLI's numpy
# encoder), encode, and report the environment and huggingface_hub's constant after.
PROGRAM = """
import json, os, sys
from tests.helpers.network import NetworkGuard
guard = NetworkGuard()
guard.install()
before = dict(os.environ)
from vrsd_kit.bundled_model import bundled_model_path
from vrsd_kit.numpy_encoder import bundled_numpy_encoder
from vrsd_langchain import default_embeddings
from vrsd_llamaindex import default_embed_model
bundled_model_path()
sizes = [len(default_embeddings().embed_query("kettle")),
         len(default_embed_model().get_text_embedding("kettle")),
         len(bundled_numpy_encoder().embed(["kettle"])[0])]
import huggingface_hub.constants as hub  # first imported while loading: reads the env then
changed = sorted(k for k in set(before) | set(os.environ) if before.get(k) != os.environ.get(k))
print(json.dumps({"sizes": sizes, "changed": changed, "offline": hub.HF_HUB_OFFLINE,
                  "network": guard.attempts}))
"""


def test_loading_the_bundled_model_changes_no_environment_and_stays_offline():
    offline = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_DATASETS_OFFLINE")
    env = {k: v for k, v in os.environ.items() if k not in offline}
    env["PYTHONPATH"] = str(ROOT)
    proc = subprocess.run([sys.executable, "-c", PROGRAM], capture_output=True, text=True,
                          env=env, cwd=ROOT, timeout=600, check=False)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert report["sizes"] == [384, 384, 384]
    # the libraries themselves may set a variable or two (e.g. tokenizers' parallelism
    # flag after use); the offline switches are the ones a library must leave alone
    assert not set(report["changed"]) & set(offline), report["changed"]
    assert report["offline"] is False
    assert report["network"] == []
