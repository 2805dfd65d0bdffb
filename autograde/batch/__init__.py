"""Batch: one submission graded in a worker process (:mod:`.worker`: normalise, execute, classify), many on an
executor that survives lost workers (:mod:`.pool`). A worker never imports the writers."""
