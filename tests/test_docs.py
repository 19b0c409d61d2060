"""The README's generated sections match the rules (run `python -m migrate.docs` to refresh)."""
from migrate import docs


def test_readme_generated_sections_are_current():
    assert docs.main(["--check"]) == 0


def test_every_rule_appears_in_the_readme():
    readme = docs.README.read_text(encoding="utf-8")
    for rule in docs.codemods.all_rules():
        assert f"| {rule.code} |" in readme
