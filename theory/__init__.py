"""Every formal result of the paper as an executable, tested claim (issue 5).

A claim is data (id, title, the paper's statement or figure) plus a check that builds the witness
or certificate and returns a frozen :class:`ClaimResult`. ``fr theory`` runs them all.
"""
