"""nbgrader preprocessors this course adds to autograding (see nbgrader_config.py)."""
from nbgrader.preprocessors import NbGraderPreprocessor


class StderrIsNotFailure(NbGraderPreprocessor):
    """Relabel what test cells wrote to stderr as stdout, prefixed ``[stderr]``.

    nbgrader scores any test cell that wrote to stderr as failed, so a correct
    answer that prints a debug message or triggers a warning would lose its
    points. Exceptions still fail the cell; tests that must forbid warnings
    turn them into exceptions themselves.
    """

    def preprocess_cell(self, cell, resources, index):
        if cell.cell_type == "code" and cell.metadata.get("nbgrader", {}).get("grade"):
            for output in cell.get("outputs", []):
                if output.get("output_type") == "stream" and output.get("name") == "stderr":
                    output["name"] = "stdout"
                    output["text"] = "".join(f"[stderr] {line}" for line in output["text"].splitlines(keepends=True))
        return cell, resources
