"""The exports train: SFT, DPO and KTO rows of the hand-built store, written as Parquet and loaded
with `datasets`, each run one optimizer step through TRL's own trainer on a tiny model and
tokenizer built here (nothing is downloaded)."""

import math

import pytest

from tests.traces.known_store import build
from traces import pairs

trl = pytest.importorskip("trl")
datasets = pytest.importorskip("datasets")
SPECIAL = ["<unk>", "<pad>", "<s>", "</s>"]
CHAT = ("{% for m in messages %}{{ m['role'] }}: {{ m['content'] }}\n{% endfor %}"
        "{% if add_generation_prompt %}assistant: {% endif %}")


@pytest.fixture(scope="module")
def exports(tmp_path_factory):
    folder = tmp_path_factory.mktemp("exports")
    store = build(folder / "t.db")
    attempts = store.attempts("r")
    store.close()
    return {fmt: pairs.write(pairs.dataset(fmt, attempts), folder / f"{fmt}.parquet", fmt) for fmt in ("sft", "dpo", "kto")}


@pytest.fixture(scope="module")
def tokenizer(exports):
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    words = {w for path in exports.values() for row in datasets.load_dataset("parquet", data_files=str(path),
                                                                                 split="train") for w in str(row).split()}
    vocab = {w: i for i, w in enumerate(SPECIAL + sorted(words - set(SPECIAL)))}
    model = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    model.pre_tokenizer = pre_tokenizers.Whitespace()
    made = PreTrainedTokenizerFast(tokenizer_object=model, unk_token="<unk>", pad_token="<pad>", bos_token="<s>",
                                   eos_token="</s>")
    made.chat_template = CHAT
    return made


def tiny_model(tokenizer):
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    return LlamaForCausalLM(LlamaConfig(vocab_size=len(tokenizer), hidden_size=16, intermediate_size=32,
                                        num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=2,
                                        max_position_embeddings=512, pad_token_id=tokenizer.pad_token_id,
                                        bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id))


@pytest.mark.parametrize("fmt", ["sft", "dpo", "kto"])
def test_an_export_trains_one_step_with_trls_trainer(exports, tokenizer, tmp_path, fmt):
    dataset = datasets.load_dataset("parquet", data_files=str(exports[fmt]), split="train")
    options = dict(output_dir=str(tmp_path), max_steps=1, per_device_train_batch_size=2, report_to=[], use_cpu=True,
                   save_strategy="no", max_length=256)
    if fmt == "sft":
        trainer = trl.SFTTrainer(model=tiny_model(tokenizer), args=trl.SFTConfig(**options), train_dataset=dataset,
                                 processing_class=tokenizer)
    elif fmt == "dpo":
        trainer = trl.DPOTrainer(model=tiny_model(tokenizer), ref_model=tiny_model(tokenizer),
                                 args=trl.DPOConfig(**options), train_dataset=dataset, processing_class=tokenizer)
    else:
        trainer = trl.KTOTrainer(model=tiny_model(tokenizer), ref_model=tiny_model(tokenizer),
                                 args=trl.KTOConfig(**options), train_dataset=dataset, processing_class=tokenizer)
    result = trainer.train()
    assert result.global_step == 1 and math.isfinite(result.training_loss)
