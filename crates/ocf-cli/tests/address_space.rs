//! Under an address-space cap of 2 GB every command still reads its input (issue 35: "Each open
//! session reserves a 1 GiB worker stack: under a 2 GB address-space cap every command fails
//! before reading its input … Size stacks to what the depth limits need, and share workers").
//! The binary runs under `ulimit -v` in a shell, with the sample fighter and an action with
//! participants given as character files, each pinning its own packs.

use std::path::PathBuf;
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `ocf ARGS` under a cap of 2 000 000 KiB of address space: its exit status and output.
fn capped(args: &[&str]) -> (bool, String, String) {
    let mut line = String::from("ulimit -v 2000000 && exec \"$0\"");
    for i in 0..args.len() {
        line.push_str(&format!(" \"${{{}}}\"", i + 1));
    }
    let out = Command::new("sh")
        .arg("-c")
        .arg(line)
        .arg(env!("CARGO_BIN_EXE_ocf"))
        .args(args)
        .current_dir(root())
        .env("RUST_BACKTRACE", "0")
        .output()
        .expect("sh runs");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_sheet_is_computed_under_a_2_gb_address_space_cap() {
    let (ok, out, err) = capped(&["sheet", "testdata/characters/fighter-5.yaml"]);
    assert!(ok, "{err}");
    assert!(out.contains("Armor Class 19"), "{out}");
}

#[test]
fn an_action_with_participants_runs_under_a_2_gb_address_space_cap() {
    // The dragon's Fire Breath on a goblin, a character file of its own session (the dragon's
    // save handed off to it): the sessions share one worker, and the action's own deep stack is
    // sized as theirs.
    let goblin = "testdata/characters/goblin.yaml";
    let (ok, out, err) = capped(&[
        "act",
        "testdata/characters/adult-red-dragon.yaml",
        "5e-srd-5.1:monsters.adult-red-dragon#fire-breath",
        "--entry",
        "dragon",
        "--participant",
        &format!("target={goblin}"),
        "--seed",
        "3",
        "--json",
    ]);
    assert!(ok, "{err}");
    assert!(out.contains("\"status\": \"finished\""), "{out}");
}
