const { SessionManager } = await import("@mariozechner/pi-coding-agent");
const sm = SessionManager.open(process.argv[2], "/tmp/cyc");
console.log("opened; leaf", sm.getLeafId());
console.log(JSON.stringify(sm.buildSessionContext()).slice(0, 100));
