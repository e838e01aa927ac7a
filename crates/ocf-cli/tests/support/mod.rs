//! What the CLI tests share: running `ocf` as other tools do.

use std::process::Command;

/// Runs `ocf ARGS` from the repository's root, as the README's commands are written, with
/// `RUST_LOG` removed so that no span reaches the output; gives stdout then stderr, and the exit
/// code.
pub fn ocf(args: &[&str]) -> (String, i32) {
    let output = Command::new(env!("CARGO_BIN_EXE_ocf"))
        .args(args)
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .env_remove("RUST_LOG")
        .output()
        .expect("ocf runs");
    let mut text = String::from_utf8(output.stdout).unwrap();
    text.push_str(&String::from_utf8(output.stderr).unwrap());
    (text, output.status.code().unwrap_or(-1))
}
