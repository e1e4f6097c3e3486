"""docs/configs.md is the config schema's reference: generated from it, and every key it lists is
one that configs accept, with a type, a default and a meaning."""

import os

import pytest

from sparseflow._src.models import load_config, parse_config
from sparseflow._src.models.config import CONFIG_DIR
from sparseflow._src.models.config_schema import KEYS, SECTIONS, markdown

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_docs_configs_md_is_generated_from_the_schema():
    with open(os.path.join(ROOT, "docs", "configs.md")) as f:
        text = f.read()
    assert text == markdown(), "docs/configs.md is out of date: run python tools/gen_config_docs.py"
    for (section, name), key in KEYS.items():
        assert key.type and key.meaning and section in SECTIONS
        assert f"| `{name}`" in text


def test_every_documented_key_is_accepted_and_an_unknown_one_refused(tmp_path):
    doc = {section: {} for section in SECTIONS}
    for (section, name), key in KEYS.items():
        if not key.required and key.default is not None:
            doc[section][name] = key.default
    doc["data"].update(train="t.csv", label="y", columns=["x", "y"], data_dir=str(tmp_path), eval="e.csv", id="x",
                       comment_prefix="#", reject_file="r.jsonl")
    doc["features"].update(categorical=["x"])
    doc["model"].update(embedding_stddev=0.1)
    doc["train"].update(model_dir="m")
    cfg = parse_config(doc)
    assert cfg.data["id"] == "x" and cfg.train["shuffle_buffer"] == KEYS[("train", "shuffle_buffer")].default
    doc["train"]["batchsize"] = 3
    with pytest.raises(ValueError, match=r"unknown key\(s\) \['batchsize'\]"):
        parse_config(doc)


@pytest.mark.parametrize("name", sorted(f[:-5] for f in os.listdir(CONFIG_DIR) if f.endswith(".toml")))
def test_bundled_configs_use_documented_keys(name):
    cfg = load_config(name)
    for section, table in cfg.document.items():
        assert set(table) <= {n for (s, n) in KEYS if s == section}
