//! Reading the one manifest of the shared fixtures (`shared-fixtures/manifest.json`): the CLI
//! arguments of each committed output (`outputs`), and for each fixture the file holding the
//! expected stdout of each output. `expected.rs` writes it; the Rust tests, the Zig tests
//! (zig/tests/cli_input.zig) and `evtx-compare parity` read it.

use serde_json::Value;
use std::path::Path;

/// One expected output: `args` (after `-t 1`) on `fixture` prints the bytes of `file`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Expectation {
    /// The fixture, relative to the fixtures directory (`synthetic/basic.evtx`).
    pub fixture: String,
    /// The output's key in `outputs` (`jsonl`, `sep_jsonl`, `xml`).
    pub output: String,
    pub args: Vec<String>,
    /// The expected stdout, relative to the fixtures directory.
    pub file: String,
    /// The reference's output where our rule differs from it (`ours` in the manifest): the
    /// engines are held to `file`, the reference is not.
    pub ours: bool,
}

/// Every expectation of the manifest in `fixtures_dir`, in manifest order.
pub fn expectations(fixtures_dir: &Path) -> Result<Vec<Expectation>, String> {
    let path = fixtures_dir.join("manifest.json");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let manifest: Value =
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    parse(&manifest).map_err(|e| format!("{}: {e}", path.display()))
}

fn parse(manifest: &Value) -> Result<Vec<Expectation>, String> {
    let outputs = manifest["outputs"]
        .as_object()
        .ok_or("no `outputs` table")?;
    let files = manifest["files"].as_array().ok_or("no `files` list")?;
    let mut out = Vec::new();
    for file in files {
        let fixture = file["path"].as_str().ok_or("a file without `path`")?;
        for (key, args) in outputs {
            let args: Vec<String> = args
                .as_array()
                .ok_or_else(|| format!("outputs.{key} is not a list"))?
                .iter()
                .map(|a| {
                    a.as_str()
                        .map(str::to_owned)
                        .ok_or("an argument is not a string")
                })
                .collect::<Result<_, _>>()?;
            // `ours.xml` holds counts, so the file of our XML rule is `ours.xml_file`.
            let ours_key = if key == "xml" {
                "xml_file"
            } else {
                key.as_str()
            };
            let (file_name, ours) = match file["ours"][ours_key].as_str() {
                Some(name) => (name, true),
                None => (
                    file["expected"][key.as_str()]
                        .as_str()
                        .ok_or_else(|| format!("{fixture}: no expected.{key}"))?,
                    false,
                ),
            };
            out.push(Expectation {
                fixture: fixture.to_owned(),
                output: key.clone(),
                args,
                file: file_name.to_owned(),
                ours,
            });
        }
    }
    if out.is_empty() {
        return Err("no expectations".into());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn ours_stands_in_for_the_reference_file() {
        let manifest = json!({
            "outputs": {"jsonl": ["-o", "jsonl"], "xml": ["-o", "xml"]},
            "files": [{
                "path": "damaged/u.evtx",
                "expected": {"jsonl": "expected/u.jsonl", "xml": "expected/u.xml"},
                "ours": {"jsonl": "expected/u.ours.jsonl", "xml": {"records": 1},
                         "xml_file": "expected/u.ours.xml"},
            }],
        });
        let got = parse(&manifest).unwrap();
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].file, "expected/u.ours.jsonl");
        assert_eq!(got[1].file, "expected/u.ours.xml");
        assert!(got.iter().all(|e| e.ours));
        assert_eq!(got[1].args, ["-o", "xml"]);
    }

    #[test]
    fn a_manifest_without_outputs_is_an_error() {
        assert!(parse(&json!({"files": []})).is_err());
    }
}
