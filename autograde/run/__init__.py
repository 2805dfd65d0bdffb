"""Run: one notebook executed by nbgrader (:mod:`.execute`) in a kernel started by :mod:`.kernel_manager` through
the bubblewrap sandbox (:mod:`.sandbox`), its test cells run in a checker process (:mod:`.checker`) that queries the
kernel's agent (:mod:`.agent`, sent to the kernel as source) over data-only frames (:mod:`.wire`)."""
