#!/usr/bin/env python3
"""zoo.py: the model-zoo conformance run: public models exported with
torch.export, built with devproc for cpu and cuda, compared with PyTorch.

Run from the repository root on the GPU machine (PyTorch, torchvision and
transformers installed, DevProc built; tools/zoo.sh does both):

    python3 tools/zoo.py [--models NAME... | --set SET...] [--skip NAME...] [--forms train core]
                         [--jobs N] [--timeout SECONDS] [--deadline SECONDS]
                         [--time-import MODEL] [--work DIR] [--out tools/zoo/RESULTS.md]

Models: every torchvision classification model
(torchvision.models.list_models(module=torchvision.models); 224x224, batch 1;
inception_v3 at 299), the segmentation models fcn_resnet50,
deeplabv3_mobilenet_v3_large and lraspp_mobilenet_v3_large (their "out"),
and Hugging Face GPT-2, Llama, Qwen2 (logits) and BERT (last hidden state)
with small random configs (batch 1, 32 tokens): the set "torchvision",
the default.  --set NAME... runs the sets named instead: torchvision,
timm (a spread of timm's models, TIMM below, each at its own input size),
hf (more Hugging Face architectures, HF_MORE: Mistral, Phi, Gemma, OPT,
BLOOM, Falcon, T5's encoder and others, in the same small config), seq
(torchvision's video classifiers, timm's Sequencer and small LSTM/GRU
nets: SEQ), hfx (Hugging Face vision, speech, encoder-decoder, state-space
and mixture-of-experts models, each in a small config: HFX).
Weights are random (seeded), the models in eval mode.  Each model is exported in both forms:
the training IR ("train") and run_decompositions() ("core").  For each
(model, form): does it import, how long `devproc build` takes per target,
the first line of any error, and whether the output matches PyTorch's in
fp32: max|err| / max|ref| <= 1e-4 end to end.  Where torch.export's
program itself differs from eager PyTorch by more than that, the row says
so and compares with the exported program's output (what DevProc
compiles); an output that is all zeros, or under 1e-30 (random weights
whose activations vanish), is DEGENERATE: nothing to compare.

Each model runs in a process of its own (python3 tools/zoo.py --one NAME),
--jobs of them at a time, each stopped after --timeout seconds, so that one
model's crash, hang or failure costs its own rows only; the rows it
finished stay, and the row of a stopped model says what it was doing
(WORK/NAME/stage.*: PyTorch and the export, a form's archive, each
target's build or run).  At --deadline seconds the run stops what is left and
writes the table (Markdown, one row per model and form) to --out anyway.
--time-import MODEL then times dp-import and dp-legalize on that model's
archives (5 runs each form; fresh outputs every run).  Exit status 0 unless
the run itself failed.
"""
import argparse
import concurrent.futures as cf
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import threading
import time
import traceback

TOL = 1e-4
# below this, a model's output is at the f32 underflow (random weights whose
# activations shrink layer by layer): each target's rounding differs there
TINY = 1e-30
SEG = ["fcn_resnet50", "deeplabv3_mobilenet_v3_large", "lraspp_mobilenet_v3_large"]
HF = ["hf_gpt2", "hf_llama", "hf_qwen2", "hf_bert"]
# Started first, so that the longest exports and builds overlap the many
# short ones instead of trailing them.
SLOW = ["vit_h_14", "regnet_y_128gf", "vit_l_16", "vit_l_32", "regnet_y_32gf", "regnet_y_16gf", "regnet_x_32gf",
        "efficientnet_v2_l", "efficientnet_b7", "maxvit_t", "swin_v2_b", "swin_b",
        "vgg19_bn", "vgg19", "vgg16_bn", "vgg16", "convnext_large", "efficientnet_b6",
        "efficientnet_v2_m", "swin_v2_s", "convnext_base", "wide_resnet101_2", "vit_b_16",
        "vit_b_32", "swin_s", "efficientnet_b5", "regnet_x_16gf", "densenet201",
        "densenet161", "resnext101_64x4d", "resnext101_32x8d"]
# Left out by default (--skip NAME... adds to it, with the reason "--skip"):
# none.  vit_h_14 and regnet_y_128gf (2.5 GB archives) run like the others.
SKIP = {}


def all_models():
    import torchvision
    cls = sorted(torchvision.models.list_models(module=torchvision.models))
    return cls + SEG + HF


# --set timm: a spread of timm's architectures (convolution nets of many
# families, mobile nets, MLP mixers and vision transformers), small configs
# where a family has them, random weights, each at its own input size
TIMM = ["resnet50d", "resnext50_32x4d", "seresnext26d_32x4d", "ecaresnet26t", "skresnet18",
        "res2net50_26w_4s", "resnest14d", "regnetz_b16", "cspresnet50", "cspdarknet53", "dla34",
        "dpn68", "hrnet_w18_small", "ese_vovnet19b_dw", "ghostnet_100", "ghostnetv2_100",
        "repghostnet_050", "rexnet_100", "lcnet_050", "mobilenetv3_large_100",
        "mobilenetv4_conv_small", "tf_efficientnet_b0", "efficientnetv2_rw_t", "tinynet_a",
        "mixnet_s", "fbnetc_100", "repvgg_a0", "mobileone_s0", "inception_v4", "xception41",
        "nf_resnet26", "convnext_atto", "convnextv2_atto", "edgenext_xx_small",
        "efficientformer_l1", "efficientformerv2_s0", "fastvit_t8", "levit_128s",
        "poolformer_s12", "mixer_s16_224", "resmlp_12_224", "gmlp_ti16_224",
        "vit_tiny_patch16_224", "deit_tiny_distilled_patch16_224", "deit3_small_patch16_224",
        "eva02_tiny_patch14_224", "cait_xxs24_224", "xcit_nano_12_p16_224", "pit_ti_224",
        "twins_svt_small", "crossvit_tiny_240", "visformer_tiny", "coat_lite_tiny",
        "swinv2_cr_tiny_ns_224", "maxvit_nano_rw_256", "coatnet_nano_rw_224", "mobilevit_xxs",
        "mobilevitv2_050", "tiny_vit_5m_224", "efficientvit_b0", "efficientvit_m0",
        "davit_tiny", "focalnet_tiny_srf", "inception_next_tiny", "hgnetv2_b0", "starnet_s1",
        "mambaout_femto", "halonet26t", "botnet26t_256", "lambda_resnet26t", "gcvit_xxtiny",
        "sequencer2d_s", "rdnet_tiny"]
# --set hf: more Hugging Face architectures beside HF's four, the same small
# config (2 layers, hidden 64, 4 heads, vocabulary 1000, 32 tokens);
# causal language models give their logits, encoders their last hidden state
HF_LM = ["mistral", "phi", "phi3", "gemma", "gemma2", "qwen3", "olmo", "granite", "stablelm",
         "opt", "gpt_neox", "gptj", "bloom", "falcon", "codegen", "gpt_bigcode", "mpt"]
HF_ENC = ["distilbert", "roberta", "albert", "electra", "deberta-v2", "t5"]
HF_MORE = ["hf_" + k for k in HF_LM + HF_ENC]
# --set seq: 3-D convolution and recurrent models: torchvision's video
# classifiers (a 16-frame clip, batch 1), timm's LSTM mixer, and small
# recurrent nets as users train them (a bidirectional LSTM over embedded
# tokens, a GRU tagger, a stacked LSTM regressor over 48 steps)
VIDEO = ["r3d_18", "mc3_18", "r2plus1d_18", "s3d", "swin3d_t", "mvit_v2_s"]
RNN = ["lstm_text", "gru_tagger", "lstm_stack"]
SEQ = ["video_" + m for m in VIDEO] + ["rnn_" + m for m in RNN] + ["timm_sequencer2d_s"]
# --set hfx: Hugging Face families beyond the text models above: vision
# (pixel values), speech (raw audio or log-mel features), encoder-decoders
# (input and decoder ids), state-space and recurrent language models and
# mixtures of experts, each in a small config (HFX: kind -> its inputs, the
# config's keywords beside the small text ones; AutoModel's last hidden
# state, or its first output)
TXT = dict(vocab_size=1000, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
           num_attention_heads=4, num_key_value_heads=2, pad_token_id=0, max_position_embeddings=128,
           d_model=64, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4,
           decoder_attention_heads=4, encoder_ffn_dim=128, decoder_ffn_dim=128)
VIS = dict(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
           image_size=64, patch_size=8)
WAV = dict(TXT, conv_dim=(32, 32, 32), conv_stride=(5, 2, 2), conv_kernel=(10, 3, 3),
           num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=4)
STAGES = dict(depths=[1, 1, 1, 1], hidden_sizes=[16, 32, 64, 128], embedding_size=16, image_size=64)
HFX = {
    # vision: (input, config keywords)
    "vit": ("img64", VIS), "beit": ("img64", dict(VIS, use_relative_position_bias=True)),
    "data2vec-vision": ("img64", dict(VIS, use_relative_position_bias=True)),
    "dinov2": ("img64", dict(VIS, mlp_ratio=2)), "deit": ("img64", VIS),
    "clip_vision_model": ("img64", VIS), "siglip_vision_model": ("img64", VIS),
    "yolos": ("img64", dict(VIS, image_size=[64, 64], num_detection_tokens=10)),
    "vit_msn": ("img64", VIS), "ijepa": ("img64", VIS),
    "swin": ("img64", dict(image_size=64, patch_size=4, embed_dim=32, depths=[1, 1],
                           num_heads=[2, 4], window_size=4)),
    "swinv2": ("img64", dict(image_size=64, patch_size=4, embed_dim=32, depths=[1, 1],
                             num_heads=[2, 4], window_size=4)),
    "convnext": ("img64", STAGES), "convnextv2": ("img64", STAGES), "resnet": ("img64", STAGES),
    "regnet": ("img64", dict(STAGES, groups_width=8)),
    "bit": ("img64", dict(STAGES, layer_type="preactivation", num_groups=8)),
    "segformer": ("img64", dict(num_encoder_blocks=4, depths=[1, 1, 1, 1],
                                hidden_sizes=[16, 32, 64, 128], num_attention_heads=[1, 2, 4, 8],
                                decoder_hidden_size=64)),
    "mobilevit": ("img64", dict(image_size=64, hidden_sizes=[32, 48, 64],
                                neck_hidden_sizes=[8, 8, 16, 16, 24, 32, 64])),
    "mobilevitv2": ("img64", dict(image_size=64, width_multiplier=0.5)),
    "mobilenet_v1": ("img64", dict(image_size=64, depth_multiplier=0.25)),
    "mobilenet_v2": ("img64", dict(image_size=64, depth_multiplier=0.35)),
    "efficientnet": ("img64", dict(image_size=64, width_coefficient=0.5, depth_coefficient=0.5,
                                   hidden_dim=640)),
    "levit": ("img224", {}), "poolformer": ("img64", dict(image_size=64)),
    "pvt": ("img64", dict(image_size=64)), "pvt_v2": ("img64", dict(image_size=64)),
    "cvt": ("img64", {}), "glpn": ("img64", dict(num_encoder_blocks=4, depths=[1, 1, 1, 1],
                                                 hidden_sizes=[16, 32, 64, 128],
                                                 num_attention_heads=[1, 2, 4, 8])),
    "focalnet": ("img64", dict(image_size=64, embed_dim=32, depths=[1, 1], focal_levels=[2, 2])),
    "hiera": ("img224", dict(embed_dim=32, depths=[1, 1, 1, 1], num_heads=[1, 1, 2, 4])),
    # speech
    "wav2vec2": ("wav", WAV), "hubert": ("wav", WAV), "wavlm": ("wav", WAV),
    "data2vec-audio": ("wav", WAV), "sew": ("wav", WAV), "unispeech": ("wav", WAV),
    "whisper": ("mel", dict(TXT, num_mel_bins=80, max_source_positions=50, max_target_positions=64)),
    "audio-spectrogram-transformer": ("ast", dict(VIS, max_length=128, num_mel_bins=32,
                                                  frequency_stride=8, time_stride=8)),
    # encoder-decoders
    "bart": ("s2s", TXT), "mbart": ("s2s", TXT), "marian": ("s2s", TXT),
    "pegasus": ("s2s", TXT), "m2m_100": ("s2s", TXT), "blenderbot-small": ("s2s", TXT),
    "t5": ("s2s", dict(TXT, d_ff=128, d_kv=16, num_layers=2, num_heads=4)),
    "mt5": ("s2s", dict(TXT, d_ff=128, d_kv=16, num_layers=2, num_heads=4)),
    "umt5": ("s2s", dict(TXT, d_ff=128, d_kv=16, num_layers=2, num_heads=4)),
    # text encoders
    "xlnet": ("ids", dict(vocab_size=1000, d_model=64, d_inner=128, n_layer=2, n_head=4)),
    "funnel": ("ids", dict(vocab_size=1000, d_model=64, block_sizes=[1, 1], block_repeats=[1, 1],
                           d_head=16, n_head=4, d_inner=128)),
    "mpnet": ("ids", TXT), "squeezebert": ("ids", dict(TXT, embedding_size=64)),
    "canine": ("ids", TXT),
    "mobilebert": ("ids", dict(TXT, embedding_size=32, intra_bottleneck_size=32,
                                num_feedforward_networks=2)),
    "convbert": ("ids", TXT),
    "layoutlm": ("ids", TXT), "xlm-roberta": ("ids", TXT), "ernie": ("ids", TXT),
    "rembert": ("ids", dict(TXT, input_embedding_size=32, output_embedding_size=32)),
    "fnet": ("ids", TXT), "megatron-bert": ("ids", TXT), "modernbert": ("ids", TXT),
    # decoders, state-space, recurrent, experts
    "mamba": ("ids", dict(TXT, state_size=8, time_step_rank=8)),
    "mamba2": ("ids", dict(TXT, state_size=8, num_heads=8, head_dim=16, n_groups=1,
                           chunk_size=16)),
    "rwkv": ("ids", dict(TXT, attention_hidden_size=64, context_length=128)),
    "recurrent_gemma": ("ids", dict(TXT, lru_width=64, head_dim=16, attention_window_size=16,
                                    block_types=["recurrent", "attention"])),
    "xglm": ("ids", dict(TXT, ffn_dim=128, num_layers=2)), "biogpt": ("ids", TXT),
    "imagegpt": ("ids", dict(TXT, n_embd=64, n_layer=2, n_head=4, n_positions=128)),
    "persimmon": ("ids", TXT), "starcoder2": ("ids", TXT), "cohere": ("ids", TXT),
    "nemotron": ("ids", TXT), "glm": ("ids", TXT), "helium": ("ids", dict(TXT, head_dim=16)),
    "gemma3_text": ("ids", dict(TXT, head_dim=16, sliding_window=16)),
    "mixtral": ("ids", dict(TXT, num_local_experts=4, num_experts_per_tok=2)),
    "olmoe": ("ids", dict(TXT, num_experts=4, num_experts_per_tok=2)),
    "qwen2_moe": ("ids", dict(TXT, num_experts=4, num_experts_per_tok=2,
                              moe_intermediate_size=64, shared_expert_intermediate_size=64)),
}
HFX_SET = ["hfx_" + k for k in HFX]
SETS = {"torchvision": None, "timm": ["timm_" + m for m in TIMM], "hf": HF_MORE, "seq": SEQ,
        "hfx": HFX_SET}


def hfx_model(kind):
    """HFX's model kind in its small config and its example inputs."""
    import torch
    import transformers as tf
    inp, kw = HFX[kind]
    cfg = tf.AutoConfig.for_model(kind, **kw)
    m = tf.AutoModel.from_config(cfg)
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(1, 1000, (1, 32), dtype=torch.int64, generator=g)
    dec = torch.randint(1, 1000, (1, 8), dtype=torch.int64, generator=g)
    xs, names = {
        "img64": ((torch.randn(1, 3, 64, 64, generator=g),), ["pixel_values"]),
        "img224": ((torch.randn(1, 3, 224, 224, generator=g),), ["pixel_values"]),
        "wav": ((torch.randn(1, 4000, generator=g),), ["input_values"]),
        "mel": ((torch.randn(1, 80, 100, generator=g), dec), ["input_features", "decoder_input_ids"]),
        "ast": ((torch.randn(1, 128, 32, generator=g),), ["input_values"]),
        "s2s": ((ids, dec), ["input_ids", "decoder_input_ids"]),
        "ids": ((ids,), ["input_ids"]),
    }[inp]

    class Hfx(torch.nn.Module):
        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, *xs):
            kw = dict(zip(names, xs))
            if "input_ids" in kw and "decoder_input_ids" not in kw:
                kw["use_cache"] = False
            o = self.m(**kw)
            h = getattr(o, "last_hidden_state", None)
            return h if h is not None else o[0]
    with torch.no_grad():   # as timm's: no weight left at zero
        for p in m.parameters():
            if p.dim() >= 2 and not bool(p.any()):
                p.normal_(0.0, 0.02)
    return Hfx(m.eval()).eval(), xs


def rnn_model(kind):
    """A small recurrent net of kind (RNN) and its example input."""
    import torch
    import torch.nn as nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            if kind == "lstm_text":   # token ids -> class logits
                self.emb = nn.Embedding(1000, 64)
                self.rnn = nn.LSTM(64, 96, num_layers=2, batch_first=True, bidirectional=True)
                self.head = nn.Linear(2 * 96, 5)
            elif kind == "gru_tagger":   # token ids -> per-token tags
                self.emb = nn.Embedding(1000, 48)
                self.rnn = nn.GRU(48, 64, batch_first=True, bidirectional=True)
                self.head = nn.Linear(128, 9)
            else:   # features over time -> one value a step
                self.rnn = nn.LSTM(16, 128, num_layers=3)
                self.head = nn.Linear(128, 1)

        def forward(self, x):
            if kind == "lstm_text":
                y, (h, c) = self.rnn(self.emb(x))
                return self.head(torch.cat([h[-2], h[-1]], 1) + y.mean(1))
            if kind == "gru_tagger":
                return self.head(self.rnn(self.emb(x))[0]).log_softmax(-1)
            return self.head(torch.tanh(self.rnn(x)[0]))
    x = (torch.randint(0, 1000, (2, 40)) if kind != "lstm_stack" else torch.randn(48, 2, 16))
    return Net().eval(), (x,)


def hf_config(kind):
    """A small config of kind (names as AutoConfig.for_model takes them)."""
    import transformers as tf
    kw = dict(vocab_size=1000, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
              num_attention_heads=4, num_key_value_heads=2, pad_token_id=0,
              max_position_embeddings=128)
    kw.update({"gemma": dict(head_dim=16), "gemma2": dict(head_dim=16, query_pre_attn_scalar=16),
               "qwen3": dict(head_dim=16), "opt": dict(ffn_dim=128, word_embed_proj_dim=64),
               "gptj": dict(rotary_dim=8, n_inner=128), "codegen": dict(rotary_dim=8, n_inner=128),
               "t5": dict(d_model=64, d_ff=128, d_kv=16, num_layers=2, num_heads=4),
               "mpt": dict(d_model=64, n_heads=4, n_layers=2, max_seq_len=128)}.get(kind, {}))
    return tf.AutoConfig.for_model(kind, **kw)


def make(name):
    """The module (returning one tensor) and its example inputs."""
    import torch
    torch.manual_seed(0)
    if name.startswith("rnn_"):
        return rnn_model(name[4:])
    if name.startswith("video_"):
        import torchvision
        m = torchvision.models.get_model(name[6:], weights=None).eval()
        side = 112 if name[6:] in ("r3d_18", "mc3_18", "r2plus1d_18") else 224
        return m, (torch.randn(1, 3, 16, side, side),)
    if name.startswith("hfx_"):
        return hfx_model(name[4:])
    if name.startswith("timm_"):
        import timm
        m = timm.create_model(name[5:], pretrained=False).eval()
        size = m.pretrained_cfg.get("input_size", (3, 224, 224))
        with torch.no_grad():   # as below: no head left at zero
            for p in m.parameters():
                if p.dim() >= 2 and not bool(p.any()):
                    p.normal_(0.0, 0.02)
        return m, (torch.randn(1, *size),)
    if name in HF_MORE:
        import transformers as tf
        kind = name[3:]
        cfg = hf_config(kind)
        enc = kind in HF_ENC
        if kind == "t5":
            m = tf.T5EncoderModel(cfg)
        else:
            m = (tf.AutoModel if enc else tf.AutoModelForCausalLM).from_config(cfg)

        class Hf(torch.nn.Module):
            def __init__(self, m, enc):
                super().__init__()
                self.m, self.enc = m, enc

            def forward(self, ids):
                if self.enc:
                    return self.m(input_ids=ids).last_hidden_state
                return self.m(input_ids=ids, use_cache=False).logits
        ids = torch.randint(1, 1000, (1, 32), dtype=torch.int64)
        return Hf(m.eval(), enc).eval(), (ids,)
    if name.startswith("hf_"):
        import transformers as tf
        kind = name[3:]
        small = dict(vocab_size=1000, hidden_size=64, intermediate_size=128,
                     num_hidden_layers=2, num_attention_heads=4)
        if kind == "gpt2":
            cfg = tf.GPT2Config(vocab_size=1000, n_embd=64, n_layer=2, n_head=4, n_positions=128)
            m = tf.GPT2LMHeadModel(cfg)
        elif kind == "llama":
            m = tf.LlamaForCausalLM(tf.LlamaConfig(num_key_value_heads=2, **small))
        elif kind == "qwen2":
            m = tf.Qwen2ForCausalLM(tf.Qwen2Config(num_key_value_heads=2, **small))
        else:
            m = tf.BertModel(tf.BertConfig(**small))

        class Wrap(torch.nn.Module):
            def __init__(self, m, bert):
                super().__init__()
                self.m, self.bert = m, bert

            def forward(self, ids):
                o = self.m(input_ids=ids, use_cache=False) if not self.bert else self.m(input_ids=ids)
                return o.last_hidden_state if self.bert else o.logits
        ids = torch.randint(0, 1000, (1, 32), dtype=torch.int64)
        return Wrap(m.eval(), kind == "bert").eval(), (ids,)
    import torchvision
    size = 299 if name == "inception_v3" else 224
    # googlenet's own init (truncated normal, std 0.01, through 22 layers)
    # shrinks its logits until they round to the same values whatever the
    # trunk computes (an exact 0 error): PyTorch's default init keeps them
    kw = {"aux_logits": True, "init_weights": name == "inception_v3"} \
        if name in ("inception_v3", "googlenet") else {}
    if name in SEG:
        kw = {"weights_backbone": None, "aux_loss": False}
    m = torchvision.models.get_model(name, weights=None, **kw).eval()
    # torchvision starts some heads at zero (the ViTs'): every output would
    # then be 0 and match whatever the trunk computed, so such a weight is
    # drawn at random like the others
    with torch.no_grad():
        for p in m.parameters():
            if p.dim() >= 2 and not bool(p.any()):
                p.normal_(0.0, 0.02)

    class Out(torch.nn.Module):
        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, x):
            y = self.m(x)
            return y["out"] if isinstance(y, dict) else y
    return Out(m).eval(), (torch.randn(1, 3, size, size),)


def first_line(text):
    """The first line of an error, not ninja's or the command's."""
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith(("[", "ninja:", "FAILED", "devproc: ")) and \
                not (line.startswith("/") and "/bin/dp-" in line.split()[0]):
            return line[:240]
    return text.strip()[:240]


def stem_of(name, form):
    return "m_" + "".join(c if c.isalnum() else "_" for c in name) + "_" + form


def save_rows(path, rows):
    with open(path + ".tmp", "w") as f:
        json.dump(rows, f)
    os.replace(path + ".tmp", path)


def mark(top, key, text):
    """Notes in WORK/NAME/stage.KEY what the model's process (key main) or a
    target's thread (cpu, cuda) is doing, for the row of a model stopped at
    its timeout or the run's deadline."""
    with open(os.path.join(top, "stage." + key + ".tmp"), "w") as f:
        f.write(text)
    os.replace(os.path.join(top, "stage." + key + ".tmp"), os.path.join(top, "stage." + key))


def stages(top):
    """What mark noted last, as "main: ...; cpu: ...; cuda: ..."."""
    said = []
    for key in ("main", "cpu", "cuda"):
        try:
            with open(os.path.join(top, "stage." + key)) as f:
                said.append(f"{key}: {f.read()}")
        except OSError:
            pass
    return "; ".join(said)


def build_run(d, stem, target, args, r, root, timeout, top):
    """Builds (model, form) for target in d and compares its output with r;
    returns (seconds, result, error, imported)."""
    import numpy as np
    b = os.path.join(d, "build_" + target)
    mark(top, target, f"{stem}: devproc build")
    # over 1 GB, the programs map their blob (--apart) instead of holding it:
    # an embedded blob is on disk twice more per target (program, library),
    # which for two 2.5 GB models at once fills a 64 GB disk
    apart = ["--apart"] if os.path.getsize(os.path.join(d, stem + ".pt2")) > 1e9 else []
    t0 = time.time()
    try:
        p = subprocess.run([os.path.join(root, "bin/devproc"), "build", stem + ".dp", "--target",
                            target, "-C", b] + apart, cwd=d, capture_output=True, text=True,
                           timeout=timeout)
    except subprocess.TimeoutExpired:
        return f"{time.time() - t0:.1f}", "build timeout", f"{target} build: over {timeout:.0f} s", None
    secs = f"{time.time() - t0:.1f}"
    if p.returncode != 0:
        msg = first_line(p.stderr + p.stdout)
        return secs, "build fails", msg, ("no" if "import:" in msg else None)
    out = os.path.join(b, "out.npy")
    mark(top, target, f"{stem}: running the program")
    try:
        p = subprocess.run([os.path.join(b, stem, stem)] + args + ["--threads", "2", "--out",
                           "out=" + out], capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return secs, "run timeout", f"{target} run: over {timeout:.0f} s", "yes"
    if p.returncode != 0:
        return secs, "run fails", first_line(p.stderr), "yes"
    mark(top, target, f"{stem}: done")
    got = np.load(out).astype(np.float64)
    if got.shape != r.shape:
        return secs, f"shape {got.shape}", "", "yes"
    if not np.any(r):
        return secs, "DEGENERATE", "PyTorch's output is all zeros: nothing to compare", "yes"
    if float(np.abs(r).max()) < TINY:
        return secs, "DEGENERATE", (f"PyTorch's output vanishes (max|ref| {np.abs(r).max():.1e}): "
                                    "rounding near the f32 underflow, nothing to compare"), "yes"
    err = float(np.abs(got - r).max()) / float(np.abs(r).max())
    return secs, ("ok" if err <= TOL else "DIFFERS") + f" {err:.1e}", "", "yes"


def one(name, forms, work, root, cuda, keep):
    """Exports, builds and runs one model in every form; its rows go to
    WORK/NAME/rows.json as each form finishes (what a timeout leaves).  A
    form's builds are removed once compared, and its archive too unless it
    is small (2 MB) or keep is set: the weights would otherwise be on disk
    seven times (archive, blob, program and library per target) for every
    model at once."""
    import numpy as np
    import torch
    torch.set_num_threads(2)
    top = os.path.join(work, name)
    os.makedirs(top, exist_ok=True)
    rpath = os.path.join(top, "rows.json")
    rows = []
    for key in ("main", "cpu", "cuda"):
        if os.path.exists(os.path.join(top, "stage." + key)):
            os.remove(os.path.join(top, "stage." + key))
    mark(top, "main", "PyTorch's output and torch.export")
    try:
        t0 = time.time()
        mod, xs = make(name)
        with torch.no_grad():
            ref = mod(*xs)
            ep0 = torch.export.export(mod, xs, strict=False)
            got = ep0.module()(*xs)
        texport = time.time() - t0
        # the program DevProc compiles is the exported one: where it differs
        # from eager (torch.export traced another path), the row says so and
        # compares with the exported program's output
        base = float(ref.detach().abs().max())
        edrift = float((got.detach().double() - ref.detach().double()).abs().max()) / max(base, 1e-30)
        if edrift > TOL:
            ref = got
    except Exception as e:   # noqa: BLE001: the row records any failure
        msg = "export: " + first_line(f"{type(e).__name__}: {e}")
        save_rows(rpath, [dict(model=name, form=f, error=msg) for f in forms])
        return
    r = ref.detach().double().numpy()
    for form in forms:
        row = dict(model=name, form=form, imported="", cpu="", cuda="", tcpu="", tcuda="",
                   error="", ops="")
        if edrift > TOL:
            row["error"] = (f"torch.export's program differs from eager by {edrift:.1e}: compared "
                            "with the exported program's output")
        rows.append(row)
        d = os.path.join(work, f"{name}_{form}")
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        stem = stem_of(name, form)
        mark(top, "main", f"{form}: " + ("run_decompositions and " if form == "core" else "") +
             "saving the archive")
        try:
            t0 = time.time()
            with torch.no_grad():
                ep = ep0.run_decompositions() if form == "core" else ep0
            torch.export.save(ep, os.path.join(d, stem + ".pt2"))
            row["texport"] = f"{texport + time.time() - t0:.1f}"
        except Exception as e:   # noqa: BLE001
            row["error"] = "export: " + first_line(f"{type(e).__name__}: {e}")
            save_rows(rpath, rows)
            continue
        dt = {torch.float32: "f32", torch.int64: "i64"}
        with open(os.path.join(d, stem + ".dp"), "w") as f:
            for i, x in enumerate(xs):
                f.write(f"input in{i}: {dt[x.dtype]}[{','.join(map(str, x.shape))}]\n")
            f.write(f'out = model("{stem}.pt2", {", ".join(f"in{i}" for i in range(len(xs)))})\n')
            f.write("output out\n")
        args = []
        for i, x in enumerate(xs):
            np.save(os.path.join(d, f"in{i}.npy"), x.numpy())
            args += ["--in", f"in{i}={os.path.join(d, f'in{i}.npy')}"]
        np.save(os.path.join(d, "ref.npy"), ref.detach().numpy())
        targets = ["cpu"] + (["cuda"] if cuda else [])
        # both targets at once: the cpu build and nvcc overlap
        mark(top, "main", f"{form}: building and running")
        with cf.ThreadPoolExecutor(len(targets)) as ex:
            res = dict(zip(targets, ex.map(lambda t: build_run(d, stem, t, args, r, root, 400,
                                                               top), targets)))
        for t in targets:
            shutil.rmtree(os.path.join(d, "build_" + t), ignore_errors=True)
        pt2 = os.path.join(d, stem + ".pt2")
        for t in targets:
            secs, result, err, imported = res[t]
            row["t" + t], row[t] = secs, result
            if err and not row["error"]:
                row["error"] = err
            if imported == "yes" or (imported == "no" and not row["imported"]):
                row["imported"] = imported
        if not row["imported"]:
            p = subprocess.run([os.path.join(root, "bin/devproc"), "dump", stem + ".pt2"], cwd=d,
                               capture_output=True, text=True)
            row["ops"] = " ".join(l.split()[1] for l in p.stdout.splitlines()
                                  if "UNSUPPORTED" in l and len(l.split()) > 1)
        if not keep and os.path.getsize(pt2) > 2 << 20:
            os.remove(pt2)
        save_rows(rpath, rows)


def launch(name, a, root):
    """Runs one model in its own process group for at most a.timeout s (or
    until the deadline); returns its rows, with the unfinished ones marked."""
    cmd = [sys.executable, os.path.abspath(__file__), "--one", name, "--work", a.work,
           "--forms", *a.forms] + (["--no-cuda"] if a.no_cuda else []) + \
          (["--keep"] if name == a.time_import else [])
    log = open(os.path.join(a.work, name + ".log"), "w")
    t0 = time.time()
    p = subprocess.Popen(cmd, cwd=root, stdout=log, stderr=subprocess.STDOUT,
                         start_new_session=True)
    limit = min(a.timeout, max(1.0, a.stop - time.time()))
    why = ""
    try:
        p.wait(timeout=limit)
        if p.returncode != 0:
            why = f"zoo.py: the model's process exited with status {p.returncode}"
    except subprocess.TimeoutExpired:
        why = (f"timeout: stopped after {time.time() - t0:.0f} s" if limit == a.timeout
               else "not finished at the run's deadline")
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        p.wait()
    log.close()
    try:
        with open(os.path.join(a.work, name, "rows.json")) as f:
            rows = {r["form"]: r for r in json.load(f)}
    except (OSError, ValueError):
        rows = {}
    if "timeout" in why or "deadline" in why:
        at = stages(os.path.join(a.work, name))
        if at:
            why += f" (at {at})"
    if why and not rows:
        with open(os.path.join(a.work, name + ".log")) as f:
            tail = [l for l in f.read().splitlines() if l.strip()][-1:]
        if tail and p.returncode not in (None, -signal.SIGKILL):
            why += ": " + tail[0][:200]
    return [rows.get(f) or dict(model=name, form=f, error=why or "no result") for f in a.forms]


def time_import(name, a, root):
    """dp-import and dp-legalize of name's archives: 5 runs per form, fresh
    outputs each time; a line per form (range and median, seconds)."""
    lines = []
    for form in a.forms:
        d = os.path.join(a.work, f"{name}_{form}")
        dp = os.path.join(d, stem_of(name, form) + ".dp")
        if not os.path.exists(dp):
            continue
        pt2 = os.path.getsize(dp[:-3] + ".pt2")
        imp, leg = [], []
        for _ in range(5):
            o = os.path.join(d, "timing")
            shutil.rmtree(o, ignore_errors=True)
            os.makedirs(o)
            t0 = time.perf_counter()
            p = subprocess.run([os.path.join(root, "bin/dp-import"), dp, "-o",
                                os.path.join(o, "1.import.dpir"), "-w",
                                os.path.join(o, "weights.bin")], capture_output=True, text=True)
            t1 = time.perf_counter()
            q = subprocess.run([os.path.join(root, "bin/dp-legalize"),
                                os.path.join(o, "1.import.dpir"), "-o",
                                os.path.join(o, "2.legalize.dpir")], capture_output=True, text=True)
            t2 = time.perf_counter()
            if p.returncode or q.returncode:
                lines.append(f"{name} {form}: " + first_line(p.stderr + q.stderr))
                break
            imp.append(t1 - t0)
            leg.append(t2 - t1)
        else:
            both = [x + y for x, y in zip(imp, leg)]
            wb = os.path.getsize(os.path.join(o, "weights.bin"))
            lines.append(f"{name} {form} ({pt2 / 1e6:.0f} MB archive, {wb / 1e6:.0f} MB weights.bin), "
                         f"5 runs: dp-import {min(imp):.2f}-{max(imp):.2f} s (median "
                         f"{statistics.median(imp):.2f}), dp-legalize {min(leg):.3f}-{max(leg):.3f} s, "
                         f"both {min(both):.2f}-{max(both):.2f} s (median {statistics.median(both):.2f})")
    return lines


def versions():
    """The libraries' versions and the GPU, for the table's note."""
    out = []
    for mod in ["torch", "torchvision", "transformers"]:
        try:
            out.append(f"{mod} {__import__(mod).__version__}")
        except Exception:   # noqa: BLE001
            out.append(f"no {mod}")
    try:
        gpu = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        gpu = ""
    return ", ".join(out) + (f"; {os.cpu_count()} cores, {gpu}." if gpu else
                             f"; {os.cpu_count()} cores, no GPU.")


def table(rows, path, note):
    cols = ["model", "form", "imported", "tcpu", "cpu", "tcuda", "cuda", "error"]
    head = ["model", "form", "import", "build cpu (s)", "cpu", "build cuda (s)", "cuda",
            "first error / unsupported ops"]
    with open(path, "w") as f:
        f.write("# Model zoo: devproc against PyTorch\n\n" + note + "\n\n")
        f.write("| " + " | ".join(head) + " |\n|" + "---|" * len(head) + "\n")
        for r in rows:
            r = dict(r)
            if r.get("ops"):
                r["error"] = (r.get("error", "") + "; unsupported: " + r["ops"]).strip("; ")
            f.write("| " + " | ".join(str(r.get(c, "")).replace("|", "/") for c in cols) + " |\n")


def summary(out, forms, cuda):
    """Counts per form: imported, cpu match, cuda match."""
    parts = []
    for form in forms:
        rs = [r for r in out if r["form"] == form]
        imp = sum(1 for r in rs if r.get("imported") == "yes")
        cpu = sum(1 for r in rs if str(r.get("cpu", "")).startswith("ok"))
        s = f"{form}: {imp} of {len(rs)} import, {cpu} match on cpu"
        if cuda:
            s += f", {sum(1 for r in rs if str(r.get('cuda', '')).startswith('ok'))} on cuda"
        parts.append(s)
    return "; ".join(parts)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", nargs="*")
    ap.add_argument("--set", nargs="*", choices=sorted(SETS), default=["torchvision"],
                    help="which models without --models: torchvision (its classification "
                         "and segmentation models and HF's GPT-2, Llama, Qwen2, BERT), timm "
                         "(a spread of timm's), hf (more Hugging Face architectures), seq "
                         "(video and recurrent models), hfx (Hugging Face vision, speech, "
                         "encoder-decoder, state-space and expert models)")
    ap.add_argument("--skip", nargs="*", default=sorted(SKIP),
                    help="models left out (default: %(default)s)")
    ap.add_argument("--forms", nargs="*", default=["train", "core"])
    ap.add_argument("--jobs", type=int, default=max(1, os.cpu_count() or 2))
    ap.add_argument("--timeout", type=float, default=420, help="seconds per model")
    ap.add_argument("--deadline", type=float, default=1e9, help="seconds; then stop")
    ap.add_argument("--time-import", metavar="MODEL")
    ap.add_argument("--work", default="/tmp/dpzoo")
    ap.add_argument("--out", default="tools/zoo/RESULTS.md")
    ap.add_argument("--no-cuda", action="store_true")
    ap.add_argument("--one", metavar="NAME", help=argparse.SUPPRESS)
    ap.add_argument("--keep", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    root = os.getcwd()
    a.work = os.path.abspath(a.work)
    if a.one:
        try:
            one(a.one, a.forms, a.work, root, not a.no_cuda, a.keep)
        except Exception:   # noqa: BLE001: the parent reads the traceback's last line
            traceback.print_exc()
            return 1
        return 0
    start = time.time()
    a.stop = start + a.deadline
    models = a.models or [m for k in a.set for m in (SETS[k] or all_models())]
    skipped = [m for m in models if m in a.skip]
    models = [m for m in models if m not in a.skip]
    # the slow ones first, but one in every four places at most, so that
    # the largest weights are not all on disk at once
    slow = [m for m in SLOW if m in models]
    rest = [m for m in models if m not in SLOW]
    order = []
    while slow or rest:
        order += slow[:1] + rest[:3]
        slow, rest = slow[1:], rest[3:]
    os.makedirs(a.work, exist_ok=True)
    os.makedirs(os.path.dirname(a.out) or ".", exist_ok=True)
    rows, lock = {}, threading.Lock()

    def task(m):
        if time.time() >= a.stop:
            return [dict(model=m, form=f, error="not run (deadline)") for f in a.forms]
        return launch(m, a, root)
    with cf.ThreadPoolExecutor(a.jobs) as ex:
        futs = {ex.submit(task, m): m for m in order}
        for fu in cf.as_completed(futs):
            m = futs[fu]
            try:
                rs = fu.result()
            except Exception:   # noqa: BLE001
                rs = [dict(model=m, form=f, error="zoo.py: " + first_line(
                    traceback.format_exc().splitlines()[-1])) for f in a.forms]
            with lock:
                for r in rs:
                    rows[(m, r["form"])] = r
                    print(f"{m} {r['form']}: import {r.get('imported') or '-'} "
                          f"cpu {r.get('cpu') or '-'} ({r.get('tcpu') or '-'} s) "
                          f"cuda {r.get('cuda') or '-'} ({r.get('tcuda') or '-'} s) "
                          f"{r.get('error', '')}", flush=True)
    out = [rows[(m, f)] for m in models for f in a.forms]
    note = (f"Made by tools/zoo.py in {time.time() - start:.0f} s, {a.jobs} models at a time "
            f"(each in its own process, at most {a.timeout:.0f} s); {len(models)} models, "
            f"{len(out)} (model, form) pairs.  {summary(out, a.forms, not a.no_cuda)}.  "
            f"Tolerance max|err|/max|ref| <= {TOL:g}; train = torch.export training IR, "
            "core = run_decompositions().  Build times are `devproc build` from the archive "
            "(import to link), the cpu and cuda builds of a form running side by side.")
    note += "  " + versions()
    if skipped:
        note += "\n\nLeft out: " + "; ".join(f"{m} ({SKIP.get(m, '--skip')})" for m in skipped) + "."
    if a.time_import:
        lines = time_import(a.time_import, a, root)
        if lines:
            note += "\n\nImport + legalize, same machine, after the run:\n" + \
                    "\n".join("- " + l for l in lines)
    table(out, a.out, note)
    print(note)
    return 0


if __name__ == "__main__":
    sys.exit(main())
