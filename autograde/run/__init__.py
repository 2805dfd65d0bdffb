"""Run: one notebook executed by nbgrader (:mod:`.execute`) in a kernel started by :mod:`.kernel_manager` through
the bubblewrap sandbox (:mod:`.sandbox`), its cells timed by :mod:`.time_limits`, its test cells run in a checker
process (:mod:`.checker`, started by :mod:`.checker_process`) that queries the kernel's agent (:mod:`.agent`, sent to
the kernel as source) over data-only frames (:mod:`.frames`, between the endpoints of :mod:`.wire`)."""
