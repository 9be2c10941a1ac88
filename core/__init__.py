"""The bottom layer: where everything lives on disk (layout, atomic writes) and the typed settings.

Every other package may import these; these import nothing of lexpipe.
"""
