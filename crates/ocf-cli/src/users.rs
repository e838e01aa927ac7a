//! `ocf users …`: the accounts of `ocf serve`, kept in its store (`--store`, as `ocf serve` takes
//! it): users with their role (`gamemaster`, `player`, `observer`) and password, and apps' bearer
//! tokens. Passwords are read from stdin (one line), never from the command line, where `ps` and
//! the shell's history would show them.

use std::io::BufRead;
use std::process::ExitCode;

use ocf_service::accounts::{self, Role};
use ocf_service::store::{Store, now};

#[derive(clap::Args)]
pub struct Args {
    /// The store `ocf serve` uses: `sqlite:PATH` or `postgres://…`.
    #[arg(long, default_value = "sqlite:ocf.sqlite3", global = true)]
    store: String,
    #[command(subcommand)]
    command: Command,
}

#[derive(clap::Subcommand)]
enum Command {
    /// Every user with their role.
    List,
    /// Add a user (or change one): its password is read from stdin unless `--no-password`.
    Add {
        name: String,
        /// `gamemaster`, `player` or `observer`.
        #[arg(long)]
        role: String,
        /// A user who logs in only by token.
        #[arg(long)]
        no_password: bool,
    },
    /// Change a user's role.
    Role { name: String, role: String },
    /// Change a user's password (read from stdin).
    Password { name: String },
    /// Remove a user, with its tokens and sessions.
    Remove { name: String },
    /// Issue a bearer token for an app acting as the user: printed once, kept as its digest.
    Token {
        name: String,
        /// Days until it expires; never when left out.
        #[arg(long)]
        days: Option<u32>,
    },
    /// Every token: its label, its user and when it expires.
    Tokens,
    /// Revoke the token with this label (the first characters `ocf users tokens` shows).
    Revoke { label: String },
}

fn role(name: &str) -> Result<Role, String> {
    Role::parse(name)
        .ok_or_else(|| format!("unknown role `{name}`: one of {}", Role::NAMES.join(", ")))
}

fn password() -> Result<String, String> {
    let mut line = String::new();
    std::io::stdin()
        .lock()
        .read_line(&mut line)
        .map_err(|e| e.to_string())?;
    let password = line.trim_end_matches(['\n', '\r']).to_owned();
    if password.chars().count() < 8 {
        return Err("a password is at least 8 characters (give it on stdin)".into());
    }
    Ok(password)
}

fn run_command(store: &dyn Store, command: Command) -> Result<(), String> {
    let e = |e: ocf_service::store::StoreError| e.to_string();
    match command {
        Command::List => {
            for account in store.accounts().map_err(e)? {
                println!("{}\t{}", account.name, account.role);
            }
        }
        Command::Add {
            name,
            role: r,
            no_password,
        } => {
            let r = role(&r)?;
            let password = if no_password { None } else { Some(password()?) };
            accounts::put_user(store, &name, r, password.as_deref())?;
            println!("{name}\t{}", r.name());
        }
        Command::Role { name, role: r } => {
            let r = role(&r)?;
            if store.account(&name).map_err(e)?.is_none() {
                return Err(format!("no user `{name}`"));
            }
            accounts::put_user(store, &name, r, None)?;
            println!("{name}\t{}", r.name());
        }
        Command::Password { name } => {
            let account = store
                .account(&name)
                .map_err(e)?
                .ok_or_else(|| format!("no user `{name}`"))?;
            let r = role(&account.role)?;
            accounts::put_user(store, &name, r, Some(&password()?))?;
        }
        Command::Remove { name } => {
            if !store.remove_account(&name).map_err(e)? {
                return Err(format!("no user `{name}`"));
            }
        }
        Command::Token { name, days } => {
            if store.account(&name).map_err(e)?.is_none() {
                return Err(format!("no user `{name}`"));
            }
            let expires = days.map(|d| now() + i64::from(d) * 24 * 3600);
            let (token, label) = accounts::issue_token(store, &name, expires).map_err(e)?;
            eprintln!("ocf users: token {label}… for `{name}` (shown once; keep it secret)");
            println!("{token}");
        }
        Command::Tokens => {
            for token in store.credentials("token").map_err(e)? {
                let expires = token
                    .expires
                    .map(|t| format!("expires at {t} (Unix time)"))
                    .unwrap_or_else(|| "never expires".into());
                println!("{}\t{}\t{expires}", token.label, token.user);
            }
        }
        Command::Revoke { label } => {
            if store.remove_credential("token", &label).map_err(e)? == 0 {
                return Err(format!("no token `{label}`"));
            }
        }
    }
    Ok(())
}

pub fn run(args: Args) -> ExitCode {
    let result = ocf_service::store::open(&args.store)
        .map_err(|e| e.to_string())
        .and_then(|store| run_command(&*store, args.command));
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("ocf users: {message}");
            ExitCode::FAILURE
        }
    }
}
