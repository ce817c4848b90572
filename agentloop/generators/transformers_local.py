"""A local Hugging Face transformers causal LM as a Generator.

`spec.model` is a local directory or a hub id (a hub id downloads on first use unless the machine
is offline; pass options={"local_files_only": True} to forbid that). torch and transformers are
imported in the constructor; the weights load on the first call (or on `load()`), in a worker
thread. Generation runs in a worker thread (`asyncio.to_thread`) under a lock, one at a time: the
lock is a threading.Lock taken inside the thread, so a cancelled caller cannot let a second
generation start while the first is still running.

The prompt uses the tokenizer's chat template when it has one, otherwise a plain
"role: content" join ending with "assistant:". Tokens in and out are counted from the ids.

Options (spec.options): "device" ("cpu", "cuda", "cuda:1"; default cuda when available),
"dtype" ("float32", "float16", "bfloat16", "auto"), "do_sample" (default: temperature > 0),
"top_p", "top_k", "seed" (torch.manual_seed before each generation, plus request.sample so
best-of-n samples differ), "local_files_only", "trust_remote_code".

An empty answer is returned as it is (no error): retrying a greedy local model would give the same.
Failures (a bad path, out of memory) are raised as Fatal.
"""

from __future__ import annotations

import asyncio
import threading
import time

from .base import Fatal, GeneratorSpec, Message, Request, Response


class TransformersGenerator:
    def __init__(self, spec: GeneratorSpec):
        try:
            import torch
            import transformers
        except ImportError as exc:
            raise Fatal("the 'transformers' generator needs torch and transformers installed") from exc
        self._torch = torch
        self._transformers = transformers
        self.spec = spec
        self.name = f"{spec.provider}:{spec.model}"
        options = spec.options or {}
        self.device = options.get("device") or ("cuda" if torch.cuda.is_available() else "cpu")
        self._lock = threading.Lock()
        self.model = None
        self.tokenizer = None

    # -- loading --------------------------------------------------------------------------------

    def _load(self) -> None:
        if self.model is not None:
            return
        options = self.spec.options or {}
        torch, transformers = self._torch, self._transformers
        common = {
            "local_files_only": bool(options.get("local_files_only", False)),
            "trust_remote_code": bool(options.get("trust_remote_code", False)),
        }
        try:
            tokenizer = transformers.AutoTokenizer.from_pretrained(self.spec.model, **common)
            kwargs = dict(common)
            dtype = options.get("dtype")
            if dtype:
                kwargs["dtype"] = dtype if dtype == "auto" else getattr(torch, dtype)
            model = transformers.AutoModelForCausalLM.from_pretrained(self.spec.model, **kwargs)
            model.to(self.device)
            model.eval()
        except Exception as exc:
            raise Fatal(f"transformers: could not load {self.spec.model!r}: {type(exc).__name__}: {exc}") from exc
        self.tokenizer, self.model = tokenizer, model

    async def load(self) -> None:
        def run() -> None:
            with self._lock:
                self._load()

        await asyncio.to_thread(run)

    # -- prompting ------------------------------------------------------------------------------

    def prompt_text(self, messages: tuple[Message, ...]) -> str:
        tokenizer = self.tokenizer
        chat = [{"role": m.role, "content": m.content} for m in messages]
        if getattr(tokenizer, "chat_template", None):
            return tokenizer.apply_chat_template(chat, tokenize=False, add_generation_prompt=True)
        return "\n".join(f"{m['role']}: {m['content']}" for m in chat) + "\nassistant:"

    def _encode(self, request: Request):
        """The prompt's token ids and attention mask, on the model's device."""
        prompt = self.prompt_text(request.messages)
        encoded = self.tokenizer(prompt, return_tensors="pt", add_special_tokens=False)
        input_ids = encoded["input_ids"].to(self.device)
        attention_mask = encoded.get("attention_mask")
        if attention_mask is None:
            attention_mask = self._torch.ones_like(input_ids)
        return input_ids, attention_mask.to(self.device)

    def _generation_kwargs(self, request: Request, do_sample: bool) -> dict:
        options = self.spec.options or {}
        kwargs: dict = {"max_new_tokens": int(request.max_tokens), "do_sample": do_sample}
        if do_sample:
            kwargs["temperature"] = max(float(request.temperature), 1e-5)
            kwargs.update({name: options[name] for name in ("top_p", "top_k") if name in options})
        tokenizer = self.tokenizer
        pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
        if pad is not None:
            kwargs["pad_token_id"] = pad
        return kwargs

    def _finish_reason(self, new_ids, max_tokens: int) -> str:
        """Why generation ended: "stop" where the model ended its answer (an end-of-sequence token, or
        fewer tokens than allowed), "length" where it ran out of tokens."""
        tokens_out = int(new_ids.shape[0])
        eos = self.tokenizer.eos_token_id
        stopped = tokens_out > 0 and eos is not None and int(new_ids[-1]) == eos
        return "stop" if stopped or tokens_out < max_tokens else "length"

    def _generate_sync(self, request: Request) -> Response:
        with self._lock:
            self._load()
            torch = self._torch
            options = self.spec.options or {}
            start = time.monotonic()
            try:
                input_ids, attention_mask = self._encode(request)
                do_sample = bool(options.get("do_sample", request.temperature > 0))
                kwargs = self._generation_kwargs(request, do_sample)
                if "seed" in options:
                    torch.manual_seed(int(options["seed"]) + int(request.sample))
                with torch.inference_mode():
                    output = self.model.generate(input_ids=input_ids, attention_mask=attention_mask, **kwargs)
                new_ids = output[0, input_ids.shape[1]:]
                text = self.tokenizer.decode(new_ids, skip_special_tokens=True)
            except Exception as exc:
                raise Fatal(f"transformers: generation failed: {type(exc).__name__}: {exc}") from exc
            tokens_in, tokens_out = int(input_ids.shape[1]), int(new_ids.shape[0])
            return Response(
                text=text,
                model=request.model or self.spec.model,
                tokens_in=tokens_in,
                tokens_out=tokens_out,
                cost_usd=self.spec.cost(tokens_in, tokens_out),
                latency_s=time.monotonic() - start,
                finish_reason=self._finish_reason(new_ids, request.max_tokens),
                extra={"device": str(self.device), "do_sample": do_sample},
            )

    async def generate(self, request: Request) -> Response:
        return await asyncio.to_thread(self._generate_sync, request)

    async def close(self) -> None:
        def release() -> None:
            with self._lock:
                self.model = None
                self.tokenizer = None
                if str(self.device).startswith("cuda"):
                    self._torch.cuda.empty_cache()

        await asyncio.to_thread(release)


__all__ = ["TransformersGenerator"]
