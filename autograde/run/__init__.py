"""Run: one notebook executed by nbgrader (:mod:`.execute`) in a kernel started by :mod:`.kernel_manager` through
the bubblewrap sandbox (:mod:`.sandbox`), its test cells guarded (:mod:`.guard`, sent to the kernel as source)."""
