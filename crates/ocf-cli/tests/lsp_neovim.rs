//! `ocf lsp` in a real editor: headless Neovim opens a pack file, attaches the server through its
//! built-in LSP client (tests/fixtures/lsp/neovim.lua), and the test checks the diagnostics, the
//! hover and the definition the editor received, the diagnostics after an edit, then a rename
//! across the pack and its dependency and a quick fix, each applied by the editor.
//!
//! Needs `nvim` (`.ci/run` installs Debian's `neovim` when it is missing); without it the test says
//! so and passes.

use std::path::{Path, PathBuf};
use std::process::Command;

use expect_test::expect;
use serde_json::Value;

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

#[test]
fn neovim_receives_diagnostics_hover_and_definition() {
    if Command::new("nvim").arg("--version").output().is_err() {
        // CI installs it (`.ci/run` sets OCF_REQUIRE_NVIM): there, its absence is a failure.
        assert!(
            std::env::var_os("OCF_REQUIRE_NVIM").is_none(),
            "neovim (`nvim`) is not installed"
        );
        eprintln!(
            "SKIPPED: neovim (`nvim`) is not installed; `.ci/run` installs it with apt \
             (`apt-get install -y neovim`)"
        );
        return;
    }
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let work: PathBuf = std::env::temp_dir().join(format!("ocf-lsp-neovim-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&work);
    let root = work.join("packs");
    copy_dir(&manifest.join("../ocf-lsp/tests/fixtures/packs"), &root);
    let root = root.canonicalize().unwrap();
    let out = work.join("received.json");
    let status = Command::new("nvim")
        .args(["--headless", "--clean", "-n", "-i", "NONE", "-u"])
        .arg(manifest.join("tests/fixtures/lsp/neovim.lua"))
        .env("OCF_BIN", env!("CARGO_BIN_EXE_ocf"))
        .env("OCF_ROOT", &root)
        .env("OCF_FILE", root.join("homebrew/rules/attack.yaml"))
        .env("OCF_OUT", &out)
        .env("XDG_CONFIG_HOME", work.join("config"))
        .env("XDG_DATA_HOME", work.join("data"))
        .env("XDG_STATE_HOME", work.join("state"))
        .env("XDG_CACHE_HOME", work.join("cache"))
        .stdin(std::process::Stdio::null())
        .output()
        .expect("nvim runs");
    let error = std::fs::read_to_string(out.with_extension("json.error")).unwrap_or_default();
    let text = std::fs::read_to_string(&out).unwrap_or_else(|_| {
        panic!(
            "neovim wrote nothing ({error}); status {:?}, stderr: {}",
            status.status,
            String::from_utf8_lossy(&status.stderr)
        )
    });
    let received: Value = serde_json::from_str(&text).unwrap();
    let _ = std::fs::remove_dir_all(&work);

    let diagnostics: Vec<String> = received["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            format!(
                "{}:{}-{}:{} severity {} {}: {}",
                d["line"],
                d["col"],
                d["end_line"],
                d["end_col"],
                d["severity"],
                d["code"].as_str().unwrap_or("?"),
                d["message"].as_str().unwrap_or("")
            )
        })
        .collect();
    expect![[r#"
        6:14-6:26 severity 1 formula-error: type-mismatch: max() takes at least 2 arguments, found 1
    "#]]
    .assert_eq(&(diagnostics.join("\n") + "\n"));
    let hover = received["hover"]["contents"]["value"]
        .as_str()
        .unwrap_or("no hover");
    expect![[r#"
        field `str.mod`

        declared in `base`, rules/abilities.yaml:4
        ```yaml
        type: integer
        formula: floor((str.score - 10) / 2)
        tags: [ability]
        ```
    "#]]
    .assert_eq(&format!("{hover}\n"));
    let definition: Vec<String> = received["definition"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .map(|l| {
            let uri = l["uri"].as_str().unwrap_or_default();
            let file = uri.rsplit("/packs/").next().unwrap_or(uri);
            format!(
                "{file} {}:{}",
                l["range"]["start"]["line"], l["range"]["start"]["character"]
            )
        })
        .collect();
    expect![[r#"
        base/rules/abilities.yaml 3:2
    "#]]
    .assert_eq(&(definition.join("\n") + "\n"));
    expect![[r#"
        []
    "#]]
    .assert_eq(&format!("{}\n", received["diagnostics_after_edit"]));
    expect![[r#"
        ["    formula: str.modifier + 2","    formula: 'max(str.modifier, 0)'","  str.modifier:"]
    "#]]
    .assert_eq(&format!("{}\n", received["renamed"]));
    let typo: Vec<String> = received["diagnostics_with_typo"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .map(|d| d["message"].as_str().unwrap_or_default().to_owned())
        .collect();
    expect![[r#"
        unknown-name: no field `str.modifir`
    "#]]
    .assert_eq(&(typo.join("\n") + "\n"));
    expect![[r#"
        {"diagnostics":[],"line":"    formula: str.modifier + 2"}
    "#]]
    .assert_eq(&format!("{}\n", received["after_fix"]));
    expect![[r#"
        "Did you mean `str.modifier`? Replace `str.modifir`"
    "#]]
    .assert_eq(&format!("{}\n", received["fixed"]));
}
