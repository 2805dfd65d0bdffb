"""The suite's own scheduling: files that read the built book run after the rest (tests/support/testrun.py)."""
from pathlib import Path
from types import SimpleNamespace

from tests.support.testrun import book_files_last


def _item(path: str, *fixtures: str):
    return SimpleNamespace(path=Path(path), fixturenames=fixtures, name=f"{path}:{fixtures}")


def test_a_file_with_one_test_of_the_book_goes_last_whole_and_the_rest_keep_their_order():
    items = [_item("b.py"), _item("book.py"), _item("book.py", "book"), _item("a.py", "graded"), _item("c.py")]
    book_files_last(items)
    assert [(i.path.name, i.fixturenames) for i in items] == [
        ("b.py", ()), ("a.py", ("graded",)), ("c.py", ()), ("book.py", ()), ("book.py", ("book",))]
