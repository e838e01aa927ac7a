//! `ocf`: the command-line front end.

mod formula;
mod load;
mod sheet;

use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(name = "ocf", version, about = "The Open Character Format engine")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Formulas: parse, print canonically, evaluate.
    #[command(subcommand)]
    Formula(formula::FormulaCommand),
    /// Load packs (source folders or release `.json` files, in load order) into a ruleset.
    Load(load::LoadArgs),
    /// Compute a character's sheet.
    Sheet(sheet::SheetArgs),
    /// Print a character's sheet, and again, incrementally, each time the file changes.
    Watch(sheet::WatchArgs),
    /// Run conformance cases (YAML files, or folders of them) and report each failure.
    Conform {
        #[arg(required = true)]
        paths: Vec<PathBuf>,
    },
}

fn main() -> ExitCode {
    match Cli::parse().command {
        Command::Formula(command) => formula::run(command),
        Command::Load(args) => load::run(args),
        Command::Sheet(args) => sheet::run_sheet(args),
        Command::Watch(args) => sheet::run_watch(args),
        Command::Conform { paths } => {
            let summary = ocf_cli::conform::run(&paths);
            for failure in &summary.failures {
                match &failure.description {
                    Some(d) => println!("FAIL {}: {d}", failure.path.display()),
                    None => println!("FAIL {}", failure.path.display()),
                }
                for line in failure.report.lines() {
                    println!("  {line}");
                }
            }
            println!("{}", summary.closing_line());
            if summary.failures.is_empty() {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
    }
}
