"""The entitlement report: who may do what on which object, and why (``pushdown report``)."""
