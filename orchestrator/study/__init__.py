"""Studies: replicated runs of pairings, planned, dispatched to slots (local or Ray), resumed after a crash."""
