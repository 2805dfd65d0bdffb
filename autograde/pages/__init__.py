"""Pages: the HTML written for people: each student's feedback (:mod:`.feedback`, grouped by :mod:`.outline`) and
the instructor's report (:mod:`.report`), from Jinja2 templates in ``templates/`` (:mod:`.render`)."""
