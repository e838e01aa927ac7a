//! `ocf build` and `ocf check`: a pack source folder to its release, and an author's lint over
//! folders. Problems read like a compiler's: `file:line:col: code: message`, then the source line
//! with a caret under the column.

use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use ocf_load::build::{BuildOptions, Problem, build_report};

/// `ocf build DIR [-o FILE] [--dep PATH]...`: the release JSON to FILE or stdout; problems to
/// stderr; exit 1 on an error.
pub fn build(dir: &Path, output: Option<&Path>, deps: &[PathBuf]) -> ExitCode {
    let options = match options(deps) {
        Ok(options) => options,
        Err(message) => {
            eprintln!("error: {message}");
            return ExitCode::FAILURE;
        }
    };
    let report = build_report(dir, &options);
    for problem in &report.problems {
        eprint!("{}", render(dir, problem));
    }
    let Some(release) = report.release else {
        eprintln!("{}", summary(&report.problems));
        return ExitCode::FAILURE;
    };
    let json =
        ocf_formula::json_text::to_string_pretty(&release).expect("a release serializes") + "\n";
    match output {
        Some(path) => {
            if let Err(error) = fs::write(path, json) {
                eprintln!("error: can't write {}: {error}", path.display());
                return ExitCode::FAILURE;
            }
        }
        None => print!("{json}"),
    }
    ExitCode::SUCCESS
}

/// `ocf check PATH... [--json] [--dep PATH]... [--pack PATH]...`: every problem of every pack
/// folder and character file (a path that is not a folder), rendered or as one JSON array (each
/// problem's `file` joined to its folder); exit 1 if any is an error. A character is checked on
/// the `--pack`s given, else on its pins ([`crate::character::check`]).
pub fn check(dirs: &[PathBuf], json: bool, deps: &[PathBuf], packs: &[PathBuf]) -> ExitCode {
    let options = match options(deps) {
        Ok(options) => options,
        Err(message) => {
            eprintln!("error: {message}");
            return ExitCode::FAILURE;
        }
    };
    let mut all = Vec::new();
    let mut out = String::new();
    for dir in dirs {
        if !dir.is_dir() {
            for problem in crate::character::check(dir, packs) {
                if !json {
                    out.push_str(&render(Path::new(""), &problem));
                }
                all.push(problem);
            }
            continue;
        }
        let report = build_report(dir, &options);
        for mut problem in report.problems {
            if json {
                problem.file = joined(dir, &problem.file);
            } else {
                out.push_str(&render(dir, &problem));
            }
            all.push(problem);
        }
    }
    if json {
        println!(
            "{}",
            ocf_formula::json_text::to_string_pretty(&all).expect("problems serialize")
        );
    } else {
        print!("{out}");
        println!("{}", summary(&all));
    }
    if all.iter().any(Problem::is_error) {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

/// The dependencies: a release JSON file, or a source folder built first.
fn options(deps: &[PathBuf]) -> Result<BuildOptions, String> {
    let mut options = BuildOptions::default();
    for path in deps {
        let release = if path.is_dir() {
            // A dependency with errors is given as drafted, with a warning: the pack is still
            // checked against it.
            let report = build_report(path, &options);
            match (report.release, report.draft) {
                (Some(release), _) => release,
                (None, Some(draft)) => {
                    options.with_errors.push(draft.id.as_str().to_owned());
                    draft
                }
                (None, None) => {
                    return Err(format!(
                        "the dependency {} does not build (run `ocf check` on it)",
                        path.display()
                    ));
                }
            }
        } else {
            crate::character::read_pack(path).map_err(|problems| {
                problems
                    .iter()
                    .map(|p| p.headline(Path::new("")))
                    .collect::<Vec<_>>()
                    .join("\n")
            })?
        };
        options.dependencies.push(release);
    }
    Ok(options)
}

fn joined(dir: &Path, file: &str) -> String {
    if file.is_empty() {
        dir.display().to_string()
    } else {
        dir.join(file).display().to_string()
    }
}

/// `file:line:col: code: message` (warnings say so), then the line and a caret when the file has it.
pub fn render(dir: &Path, problem: &Problem) -> String {
    let mut out = problem.headline(dir);
    out.push('\n');
    if let Some(line) = problem.line {
        let text = fs::read_to_string(dir.join(&problem.file)).unwrap_or_default();
        if let Some(source) = text.lines().nth(line - 1) {
            out.push_str(&snippet(line, source, problem.column));
        }
    }
    out
}

/// The source line, numbered, with a caret under `column` (1-based, in characters).
fn snippet(line: usize, source: &str, column: Option<usize>) -> String {
    let number = line.to_string();
    let gutter = " ".repeat(number.len());
    let mut out = format!("{gutter} |\n{number} | {source}\n");
    if let Some(column) = column {
        // Tabs stay tabs so the caret lines up under them.
        let pad: String = source
            .chars()
            .take(column.saturating_sub(1))
            .map(|c| if c == '\t' { '\t' } else { ' ' })
            .collect();
        let _ = writeln!(out, "{gutter} | {pad}^");
    }
    out
}

/// `3 errors, 1 warning`, or `no problems`.
fn summary(problems: &[Problem]) -> String {
    let errors = problems.iter().filter(|p| p.is_error()).count();
    let warnings = problems.len() - errors;
    let plural = |n: usize, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
    match (errors, warnings) {
        (0, 0) => "no problems".to_owned(),
        (e, 0) => plural(e, "error"),
        (0, w) => plural(w, "warning"),
        (e, w) => format!("{}, {}", plural(e, "error"), plural(w, "warning")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snippets_point_at_the_column() {
        expect_test::expect![[r#"
               |
            12 | 	- { item: x }
               | 	          ^
        "#]]
        .assert_eq(&snippet(12, "\t- { item: x }", Some(12)));
    }

    #[test]
    fn summaries_count_errors_and_warnings() {
        let error = Problem::error("x", "m");
        let warning = Problem::warning("y", "m");
        assert_eq!(summary(&[]), "no problems");
        assert_eq!(summary(std::slice::from_ref(&error)), "1 error");
        assert_eq!(summary(&[warning.clone(), warning.clone()]), "2 warnings");
        assert_eq!(
            summary(&[error.clone(), error, warning]),
            "2 errors, 1 warning"
        );
    }
}
