"""HTEB statistics (paper Sec. 2.3, App. I): one module per family, each a thin, documented layer
over scipy so that every number in a card or comparison can be traced to a named method."""
