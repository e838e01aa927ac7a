//! `ocf check` and `ocf load` agree (issue 10): what loadRuleset refuses in a source folder, the
//! build reports too, in the file and at the line and column it is about, not as a pack path.

use ocf_load::build::{BuildOptions, BuildReport, build_files};
use ocf_load::{LoadOptions, load_ruleset};

const MANIFEST: &str = "id: t\nversion: 1.0.0\nspecVersion: 1.0.0\n";
const RULES: &str =
    "fields:\n  level: { type: integer, input: true, default: 1 }\ncontentTypes:\n  thing: {}\n";

fn files(extra: &[(&str, &str)]) -> Vec<(String, String)> {
    let mut out = vec![
        ("pack.yaml".to_owned(), MANIFEST.to_owned()),
        ("rules/rules.yaml".to_owned(), RULES.to_owned()),
    ];
    for (name, text) in extra {
        match out.iter_mut().find(|(n, _)| n == name) {
            Some(file) => file.1 = (*text).to_owned(),
            None => out.push(((*name).to_owned(), (*text).to_owned())),
        }
    }
    out
}

/// Each problem as `file:line:col code`.
fn located(report: &BuildReport) -> Vec<String> {
    report
        .problems
        .iter()
        .map(|p| {
            format!(
                "{}:{}:{} {}",
                p.file,
                p.line.map_or("?".to_owned(), |l| l.to_string()),
                p.column.map_or("?".to_owned(), |c| c.to_string()),
                p.code
            )
        })
        .collect()
}

#[test]
fn the_base_pack_builds_and_loads() {
    let report = build_files(&files(&[]), &BuildOptions::default());
    assert_eq!(located(&report), Vec::<String>::new());
    load_ruleset(&[report.release.unwrap()], &LoadOptions::default()).unwrap();
}

#[test]
fn a_spec_version_written_as_a_number_is_refused_where_it_is() {
    // YAML reads `1.0` as a number; the manifest's string is then `1.0`, not `MAJOR.MINOR.PATCH`.
    let report = build_files(
        &files(&[("pack.yaml", "id: t\nversion: 1.0.0\nspecVersion: 1.0\n")]),
        &BuildOptions::default(),
    );
    assert_eq!(
        located(&report),
        ["pack.yaml:3:14 spec-version-unsupported"]
    );
    let report = build_files(
        &files(&[("pack.yaml", "id: t\nversion: 1.0.0\nspecVersion: 9.0.0\n")]),
        &BuildOptions::default(),
    );
    assert_eq!(
        located(&report),
        ["pack.yaml:3:14 spec-version-unsupported"]
    );
}

#[test]
fn an_item_with_a_null_id_is_refused_at_its_id() {
    let report = build_files(
        &files(&[(
            "content/items.yaml",
            "- { id: a, type: thing }\n- { id: null, type: thing }\n",
        )]),
        &BuildOptions::default(),
    );
    assert_eq!(
        located(&report),
        ["content/items.yaml:2:5 unknown-reference"]
    );
    assert_eq!(report.problems[0].pointer, "/1/id");
}

#[test]
fn an_empty_content_document_is_refused() {
    for text in ["", "# only a comment\n", "{}\n"] {
        let report = build_files(
            &files(&[("content/empty.yaml", text)]),
            &BuildOptions::default(),
        );
        let problems = located(&report);
        assert_eq!(problems.len(), 1, "{text:?}: {problems:?}");
        assert!(
            problems[0].starts_with("content/empty.yaml:")
                && problems[0].ends_with(" unknown-reference"),
            "{text:?}: {problems:?}"
        );
    }
}

#[test]
fn a_dependency_given_at_a_version_out_of_range_is_refused_at_the_dependency() {
    let dep = build_files(
        &[(
            "pack.yaml".to_owned(),
            "id: dep\nversion: 2.0.0\nspecVersion: 1.0.0\n".to_owned(),
        )],
        &BuildOptions::default(),
    )
    .release
    .unwrap();
    let options = BuildOptions {
        dependencies: vec![dep],
        ..BuildOptions::default()
    };
    let report = build_files(
        &files(&[(
            "pack.yaml",
            "id: t\nversion: 1.0.0\nspecVersion: 1.0.0\ndependencies:\n  dep: ^1.0.0\n",
        )]),
        &options,
    );
    assert_eq!(located(&report), ["pack.yaml:5:8 missing-dependency"]);
}

#[test]
fn what_only_loading_checks_is_reported_at_the_item_or_declaration() {
    // An item with no `type`: loadRuleset's content resolution refuses it.
    let report = build_files(
        &files(&[(
            "content/items.yaml",
            "- { id: a, type: thing }\n- { id: b }\n",
        )]),
        &BuildOptions::default(),
    );
    assert_eq!(
        located(&report),
        ["content/items.yaml:2:3 unknown-reference"]
    );
    // A follow-up that creates a character without `while`: the rules merge refuses it.
    let rules = format!(
        "{RULES}links:\n  crew: {{ pack: t }}\nfollowUps:\n  - {{ id: make, create: true, link: crew }}\n"
    );
    let report = build_files(
        &files(&[("rules/rules.yaml", &rules)]),
        &BuildOptions::default(),
    );
    let problems = located(&report);
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(
        problems[0].starts_with("rules/rules.yaml:") && !problems[0].contains('?'),
        "{problems:?}"
    );
}
