"""RASP programs compiled to exact PyTorch transformers (the RASP compiler stage).

The language (:mod:`rasplab.rasp`) knows no weights; this stage turns a RASP program into a
frozen torch module in four steps (:func:`~rasplab.rasp_compiler.compile.compile_rasp_to_model`):
:mod:`~rasplab.rasp_compiler.plan` (value sets, refusals, sub-layers),
:mod:`~rasplab.rasp_compiler.weights` (residual layout, heads, MLPs, float error bounds),
:mod:`~rasplab.rasp_compiler.model` (the torch module) and the Tracr-shaped wrapper; it saves
models (:mod:`~rasplab.rasp_compiler.export`), loads them back without the program
(:mod:`~rasplab.rasp_compiler.load`, through the interface both share:
:mod:`~rasplab.rasp_compiler.wrapper`) and checks them against the RASP evaluator
(:mod:`~rasplab.rasp_compiler.verify`).

Tracr's users reach it through Tracr's import path, ``from rasplab.rasp import compiling``
(:mod:`rasplab.rasp.compiling`, a facade over :mod:`rasplab.rasp_compiler.compile`).

>>> from rasplab.rasp import lib
>>> from rasplab.rasp_compiler.compile import compile_rasp_to_model
>>> compile_rasp_to_model(lib.make_length(), {"a"}, 4).apply(["BOS", "a", "a"]).decoded
['BOS', 2, 2]
"""
