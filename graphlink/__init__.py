"""graphlink: trail re-identification (REIDIT), exact true loves and k-unlinkability.

Data flows one way: release -> trails -> link graph -> analyses -> store/app.
"""

__version__ = "0.1.0"
