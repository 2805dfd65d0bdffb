"""Results: each test cell's status and message (:mod:`.classify`, with :mod:`.tracebacks`), kept between runs
(:mod:`.cache`) and written as CSV (:mod:`.outputs`)."""
