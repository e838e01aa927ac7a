//! The conformance runner: runs every case under some paths and reports each failure with a diff.
//!
//! A case (see [`case`]) names an engine call; [`calls`] carries it out and gives either the output or
//! the errors, as JSON, which are compared with the case's expectation by [`compare`].

pub mod actions;
pub mod calls;
pub mod case;
pub mod compare;
pub mod odds;
pub mod options;
pub mod texts;

use case::Case;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// What a call gave: its output, or the errors it failed with (each an object with at least `code`).
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    Output(serde_json::Value),
    Errors(Vec<serde_json::Value>),
}

/// The result of running cases: how many passed, and a report for each that failed.
#[derive(Debug, Default)]
pub struct Summary {
    pub passed: usize,
    pub failures: Vec<Failure>,
}

#[derive(Debug)]
pub struct Failure {
    pub path: PathBuf,
    pub description: Option<String>,
    pub report: String,
}

impl Summary {
    /// The closing line: `N passed, N failed`.
    pub fn closing_line(&self) -> String {
        format!("{} passed, {} failed", self.passed, self.failures.len())
    }
}

/// Runs every `.yaml` case under `paths` (files, or folders searched recursively, in name order).
pub fn run(paths: &[PathBuf]) -> Summary {
    let mut summary = Summary::default();
    for path in paths {
        let mut files = Vec::new();
        if let Err(e) = collect(path, &mut files) {
            summary.failures.push(Failure {
                path: path.clone(),
                description: None,
                report: format!("cannot list cases: {e}"),
            });
        }
        for file in files {
            match run_case(&file) {
                Ok(()) => summary.passed += 1,
                Err((description, report)) => summary.failures.push(Failure {
                    path: file,
                    description,
                    report,
                }),
            }
        }
    }
    summary
}

fn collect(path: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    if path.is_file() {
        out.push(path.to_path_buf());
        return Ok(());
    }
    let mut entries: Vec<_> = std::fs::read_dir(path)?.collect::<Result<_, _>>()?;
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let p = entry.path();
        if p.is_dir() {
            collect(&p, out)?;
        } else if p.extension().is_some_and(|x| x == "yaml" || x == "yml") {
            out.push(p);
        }
    }
    Ok(())
}

fn run_case(path: &Path) -> Result<(), (Option<String>, String)> {
    let case = Case::read(path).map_err(|e| (None, e))?;
    let dir = path.parent().unwrap_or(Path::new("."));
    let outcome = calls::call(&case, dir).map_err(|e| (case.description.clone(), e))?;
    let report = match (&outcome, case.expect.as_ref(), case.expected_errors()) {
        (Outcome::Output(actual), Some(expected), _) => {
            let mut report = diff(expected, actual);
            if let Some(includes) = &case.expect_includes {
                let missing = compare::missing_inclusions(includes, actual);
                if !missing.is_empty() {
                    let text = missing.join("\n");
                    report = Some(match report {
                        Some(r) => format!("{r}\n{text}"),
                        None => text,
                    });
                }
            }
            report
        }
        (Outcome::Errors(errors), None, Some(expected)) => {
            diff(&expected, &serde_json::Value::Array(errors.clone()))
        }
        (Outcome::Output(actual), None, _) => Some(format!(
            "expected errors, but the call succeeded with {}",
            ocf_formula::json_text::to_string(actual).unwrap_or_default()
        )),
        (Outcome::Errors(errors), Some(_), _) => Some(format!(
            "expected an output, but the call failed with {}",
            ocf_formula::json_text::to_string(errors).unwrap_or_default()
        )),
        (Outcome::Errors(_), None, None) => unreachable!("Case::read requires an expectation"),
    };
    match report {
        None => Ok(()),
        Some(report) => Err((case.description, report)),
    }
}

fn diff(expected: &serde_json::Value, actual: &serde_json::Value) -> Option<String> {
    let mismatches = compare::mismatches(expected, actual);
    if mismatches.is_empty() {
        return None;
    }
    let mut report = String::new();
    for m in mismatches {
        let _ = writeln!(
            report,
            "at {}: expected {}, got {}",
            m.pointer, m.expected, m.actual
        );
    }
    Some(report.trim_end().to_string())
}
