//! The project's real tokenizers (`fixtures/tokenizers/<name>/tokenizer.json.xz`), decompressed
//! once into `target/fixtures/tokenizers/<name>/`, the cache the Python tests share. A cached
//! copy older than its source is decompressed again; a new copy is written under a temporary
//! name and renamed, so parallel tests and processes never read half a file.

use std::fs;
use std::io::BufReader;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn fresh(target: &Path, source: &Path) -> bool {
    let modified = |p: &Path| fs::metadata(p).and_then(|m| m.modified()).ok();
    match (modified(target), modified(source)) {
        (Some(t), Some(s)) => t >= s,
        _ => false,
    }
}

/// Returns the text of fixture `name`'s `tokenizer.json`, decompressing it on first use.
///
/// # Panics
///
/// When the fixture is missing or not valid xz: a test cannot run without it.
pub fn tokenizer_json(name: &str) -> String {
    let source = root()
        .join("fixtures/tokenizers")
        .join(name)
        .join("tokenizer.json.xz");
    let dir = root().join("target/fixtures/tokenizers").join(name);
    let target = dir.join("tokenizer.json");
    if !fresh(&target, &source) {
        let file = fs::File::open(&source)
            .unwrap_or_else(|e| panic!("fixture {} is missing: {e}", source.display()));
        let mut bytes = Vec::new();
        lzma_rs::xz_decompress(&mut BufReader::new(file), &mut bytes)
            .unwrap_or_else(|e| panic!("fixture {} is not valid xz: {e:?}", source.display()));
        fs::create_dir_all(&dir).unwrap();
        let partial = dir.join(format!(
            ".tokenizer.json.{}.{:?}.partial",
            std::process::id(),
            std::thread::current().id()
        ));
        fs::write(&partial, &bytes).unwrap();
        fs::rename(&partial, &target).unwrap();
    }
    fs::read_to_string(&target).unwrap()
}
