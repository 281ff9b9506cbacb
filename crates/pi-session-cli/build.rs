//! Relinks the `pi-session` binary when `link-order.txt` changes: the linker reads that list
//! (through the workspace's `.cargo/config.toml`, LLD's `--symbol-ordering-file`), but cargo
//! does not know it is an input of the link. `cargo xtask link-order` writes it.

fn main() {
    println!("cargo::rerun-if-changed=link-order.txt");
}
