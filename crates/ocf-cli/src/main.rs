//! `ocf`: the command-line front end.

mod act;
mod apply;
mod formula;
mod load;
mod odds;
mod options;
mod roll;
mod sheet;
mod upgrade;

use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

/// The `ocf` binary's allocator. Building a pack, loading a ruleset and computing a sheet make
/// and free many small values (a pack's documents, formulas' trees, field values): with glibc's
/// allocator a third of `ocf sheet`'s instructions were malloc and free (docs/perf.md). The
/// libraries leave the choice to the application that links them.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

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
    /// Roll dice, or show their exact distribution.
    Roll(roll::Args),
    /// Load packs (source folders or release `.json` files, in load order) into a ruleset.
    Load(load::LoadArgs),
    /// Build a pack source folder into its release (JSON); problems go to stderr.
    Build {
        dir: PathBuf,
        /// Write the release here instead of stdout.
        #[arg(short, long)]
        output: Option<PathBuf>,
        /// A dependency: a release JSON file or a source folder. References it may declare are
        /// checked only when it is given.
        #[arg(long = "dep")]
        deps: Vec<PathBuf>,
    },
    /// Check pack source folders and character files and report every problem of each.
    Check {
        /// Pack source folders, and character files (YAML or JSON).
        #[arg(required = true)]
        dirs: Vec<PathBuf>,
        /// Print the problems as one JSON array.
        #[arg(long)]
        json: bool,
        #[arg(long = "dep")]
        deps: Vec<PathBuf>,
        /// The packs a character is checked on (folders or release `.json` files, in load
        /// order); without them, its pins are read from `testdata/packs/<id>`.
        #[arg(long = "pack")]
        packs: Vec<PathBuf>,
    },
    /// Print a JSON Schema: manifest, rules, content, pack (a release) or character.
    Schema { name: String },
    /// Compute a character's sheet.
    Sheet(sheet::SheetArgs),
    /// List a choice's options: eligible first, why the others aren't, and what each pick would
    /// change (listOptions).
    Options(options::OptionsArgs),
    /// Apply a batch of changes to a character: what changed, and the new file where asked.
    Apply(apply::ApplyArgs),
    /// Re-pin a character to the loaded packs' versions and list what no longer resolves.
    Upgrade(upgrade::UpgradeArgs),
    /// Print a character's sheet, and again, incrementally, each time the file changes.
    Watch(sheet::WatchArgs),
    /// Time one edit of a generated large character: cold, incremental and from scratch, and
    /// how many field values it re-executes against how many depend on the edited field.
    BenchEdit(ocf_cli::bench_edit::Args),
    /// Serve the engine over HTTP (JSON API, server-sent events, the web sheet editor).
    Serve(ocf_cli::serve::Args),
    /// Manage `ocf serve`'s users, roles and bearer tokens, in its store.
    Users(ocf_cli::users::Args),
    /// Serve the Language Server Protocol on stdin and stdout, for an editor (see the README).
    Lsp,
    /// Run an action on a character: ask at each pause, show the rolls, the outcome and the
    /// proposed changes.
    Act(act::ActArgs),
    /// The odds of an action before any die is rolled: each result's exact probability and each
    /// change's exact distribution.
    Odds(odds::OddsArgs),
    /// Run conformance cases (YAML files, or folders of them) and report each failure.
    Conform {
        #[arg(required = true)]
        paths: Vec<PathBuf>,
    },
}

fn main() -> ExitCode {
    restore_sigpipe();
    trace_from_env();
    match Cli::parse().command {
        Command::Formula(command) => formula::run(command),
        Command::Roll(args) => roll::main(&args),
        Command::Load(args) => load::run(args),
        Command::Build { dir, output, deps } => {
            ocf_cli::build::build(&dir, output.as_deref(), &deps)
        }
        Command::Check {
            dirs,
            json,
            deps,
            packs,
        } => ocf_cli::build::check(&dirs, json, &deps, &packs),
        Command::Schema { name } => schema(&name),
        Command::Sheet(args) => sheet::run_sheet(args),
        Command::Apply(args) => apply::run(args),
        Command::Upgrade(args) => upgrade::run(args),
        Command::Watch(args) => sheet::run_watch(args),
        Command::Options(args) => options::run(args),
        Command::Act(args) => act::run(args),
        Command::Odds(args) => odds::run(args),
        Command::Conform { paths } => conform(&paths),
        Command::Lsp => match ocf_lsp::run_stdio() {
            Ok(()) => ExitCode::SUCCESS,
            Err(message) => {
                eprintln!("ocf lsp: {message}");
                ExitCode::FAILURE
            }
        },
        Command::BenchEdit(args) => ocf_cli::bench_edit::run(args),
        Command::Serve(args) => ocf_cli::serve::run(args),
        Command::Users(args) => ocf_cli::users::run(args),
    }
}

fn schema(name: &str) -> ExitCode {
    match ocf_cli::schema::schema(name) {
        Some(schema) => {
            print!("{schema}");
            ExitCode::SUCCESS
        }
        None => {
            eprintln!("error: no schema `{name}`; there are:");
            for (name, covers) in ocf_cli::schema::SCHEMAS {
                eprintln!("  {name:<10} {covers}");
            }
            ExitCode::FAILURE
        }
    }
}

fn conform(paths: &[PathBuf]) -> ExitCode {
    let summary = ocf_cli::conform::run(paths);
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

/// Spans of the engine's calls (loadRuleset, build, computeSheet, a session's edits and sheets) on
/// stderr, each with its time when it closes, as `RUST_LOG` selects them (`RUST_LOG=info`,
/// `RUST_LOG=ocf_engine=debug`); nothing without it, so the commands' output is unchanged.
fn trace_from_env() {
    let Ok(filter) = tracing_subscriber::EnvFilter::try_from_default_env() else {
        return;
    };
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_span_events(tracing_subscriber::fmt::format::FmtSpan::CLOSE)
        .init();
}

/// Rust ignores SIGPIPE, so writing to a closed pipe (`ocf schema rules | head`) would fail every
/// `print!` with a panic. A command-line tool should end quietly there, as `cat` does.
fn restore_sigpipe() {
    #[cfg(unix)]
    // SAFETY: called first thing in `main`, before any thread is started; SIG_DFL is a valid action.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}
