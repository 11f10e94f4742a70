import { describe, expect, it } from "vitest";
import { VirtualFs } from "./fs.js";
import { formatObservation, runShell, TRUNCATION_MARK } from "./shell.js";
import { buildReadFileCommand, buildWriteFileCommand } from "./tools.js";

function workspace(): VirtualFs {
  return VirtualFs.withFiles({
    "/workspace/logs/app.log": "INFO start\nERROR disk full\nWARN slow\nerror lower\nERROR again\n",
    "/workspace/src/app/main.py": "print('hi')\n",
    "/workspace/src/app/util.py": "def f():\n    return 1\n",
    "/workspace/src/README.md": "readme\n",
    "/workspace/.hidden": "h\n",
    "/workspace/names.txt": "pear\napple\npear\nfig\napple\napple\n",
  });
}

/** Runs one command line on a fresh (or given) workspace: the observation text. */
function sh(command: string, fs: VirtualFs = workspace()): string {
  return formatObservation(runShell(fs, command));
}

describe("observation format (§6.2)", () => {
  it("is [exit=N] then stdout, then [stderr] when there is any", () => {
    expect(sh("echo hi")).toBe("[exit=0]\nhi\n");
    expect(sh("cat nope")).toBe("[exit=1]\n\n[stderr]\ncat: nope: No such file or directory\n");
    expect(sh("echo out; cat nope")).toBe("[exit=1]\nout\n\n[stderr]\ncat: nope: No such file or directory\n");
  });

  it("cuts at the output limit and marks the cut", () => {
    const result = { exitCode: 0, stdout: "x".repeat(100), stderr: "" };
    expect(formatObservation(result, 20)).toBe(`[exit=0]\n${"x".repeat(11)}${TRUNCATION_MARK}`);
    expect(formatObservation(result, 109)).toBe(`[exit=0]\n${"x".repeat(100)}`);
    // Characters are counted as Python counts them (code points).
    expect(formatObservation({ exitCode: 0, stdout: "😀😀😀", stderr: "" }, 10)).toBe(`[exit=0]\n😀${TRUNCATION_MARK}`);
  });

  it("answers an unknown command with exit 127 and 'command not found'", () => {
    expect(sh("sed -i s/a/b/ x")).toBe("[exit=127]\n\n[stderr]\nsed: command not found\n");
  });

  it("answers a syntax error with exit 2", () => {
    expect(sh("echo 'open")).toBe("[exit=2]\n\n[stderr]\nsh: unexpected EOF while looking for matching `''\n");
    expect(sh("ls &&")).toBe("[exit=2]\n\n[stderr]\nsh: syntax error: unexpected end of file\n");
    expect(sh("| ls")).toBe("[exit=2]\n\n[stderr]\nsh: syntax error near unexpected token `|'\n");
    expect(sh("sleep 1 &")).toMatch(/^\[exit=2\]\n\n\[stderr\]\nsh: background jobs/);
    expect(sh("cat > f <<EOF\nx\nEOF")).toMatch(/^\[exit=2\]\n\n\[stderr\]\nsh: here-documents \(<<\) are not supported/);
  });
});

describe("quoting, operators and redirection", () => {
  it("handles single and double quotes, escapes and adjacent parts", () => {
    expect(sh(`echo 'a  b' "c  d" e\\ f 'it'"'"'s'`)).toBe("[exit=0]\na  b c  d e f it's\n");
    expect(sh(`echo "say \\"hi\\" \\$HOME" $HOME`)).toBe('[exit=0]\nsay "hi" $HOME /workspace\n');
  });

  it("runs && and || by exit status, ; and newlines always", () => {
    expect(sh("false && echo no || echo yes; echo end\necho next")).toBe("[exit=0]\nyes\nend\nnext\n");
    expect(sh("cat nope && echo no")).toMatch(/^\[exit=1\]\n\n\[stderr\]/);
  });

  it("pipes stdout into the next command", () => {
    expect(sh("cat logs/app.log | grep ERROR | wc -l")).toBe("[exit=0]\n2\n");
    expect(sh("sort names.txt | uniq -c | sort -rn | head -n 1")).toBe("[exit=0]\n      3 apple\n");
  });

  it("redirects stdout and stderr to files, truncating or appending", () => {
    const fs = workspace();
    expect(sh("echo one > out.txt && echo two >> out.txt", fs)).toBe("[exit=0]\n");
    expect(fs.readFile("/workspace/out.txt")).toBe("one\ntwo\n");
    expect(sh("cat nope 2> err.txt; cat err.txt", fs)).toBe("[exit=0]\ncat: nope: No such file or directory\n");
    expect(sh("cat nope > all.txt 2>&1; cat all.txt", fs)).toBe("[exit=0]\ncat: nope: No such file or directory\n");
    expect(sh("cat nope 2>/dev/null || echo failed", fs)).toBe("[exit=0]\nfailed\n");
    expect(sh("wc -l < names.txt", fs)).toBe("[exit=0]\n6\n");
    expect(sh("echo x > missing/dir/f", fs)).toBe("[exit=1]\n\n[stderr]\nsh: missing/dir/f: No such file or directory\n");
  });

  it("expands $(...) in and out of double quotes, and $? ", () => {
    expect(sh(`echo "$(dirname -- '/a/b c/d.txt')"`)).toBe("[exit=0]\n/a/b c\n");
    expect(sh("echo $(printf 'a b\\nc')")).toBe("[exit=0]\na b c\n");
    expect(sh("cat nope 2>/dev/null; echo $?")).toBe("[exit=0]\n1\n");
  });

  it("expands wildcards, keeping a word that matches nothing", () => {
    expect(sh("ls src/*/*.py")).toBe("[exit=0]\nsrc/app/main.py\nsrc/app/util.py\n");
    expect(sh("echo *.txt '*.txt' /workspace/n*")).toBe("[exit=0]\nnames.txt *.txt /workspace/names.txt\n");
    expect(sh("echo *.nothing")).toBe("[exit=0]\n*.nothing\n");
  });

  it("skips comments", () => {
    expect(sh("# just a comment\necho hi # trailing")).toBe("[exit=0]\nhi\n");
  });
});

describe("the reference's read_file and write_file commands", () => {
  it("writes through base64, creating parent directories, and reports the UTF-8 size", () => {
    const fs = workspace();
    expect(sh(buildWriteFileCommand("/workspace/out/notes/it's.md", "héllo\n"), fs)).toBe(
      "[exit=0]\nwrote 7 bytes to /workspace/out/notes/it's.md\n",
    );
    expect(fs.readFile("/workspace/out/notes/it's.md")).toBe("héllo\n");
    expect(sh(buildReadFileCommand("out/notes/it's.md"), fs)).toBe("[exit=0]\nhéllo\n");
    expect(sh(buildWriteFileCommand("rel.txt", ""), fs)).toBe("[exit=0]\nwrote 0 bytes to rel.txt\n");
    expect(fs.readFile("/workspace/rel.txt")).toBe("");
  });

  it("reads a dash-named file and fails on a directory", () => {
    const fs = workspace();
    fs.writeFile("/workspace/-rf", "dash\n");
    expect(sh(buildReadFileCommand("-rf"), fs)).toBe("[exit=0]\ndash\n");
    expect(sh(buildReadFileCommand("src"), fs)).toBe("[exit=1]\n\n[stderr]\ncat: src: Is a directory\n");
  });
});

describe("built-in commands", () => {
  it("ls: hidden files with -a, long format with -l, several operands", () => {
    expect(sh("ls")).toBe("[exit=0]\nlogs\nnames.txt\nsrc\n");
    expect(sh("ls -a")).toBe("[exit=0]\n.\n..\n.hidden\nlogs\nnames.txt\nsrc\n");
    expect(sh("ls -l logs")).toBe("[exit=0]\n-rw-r--r-- 1 user user 61 Jan  1 00:00 app.log\n");
    expect(sh("ls names.txt src")).toBe("[exit=0]\nnames.txt\n\nsrc:\nREADME.md\napp\n");
    expect(sh("ls nope")).toBe("[exit=2]\n\n[stderr]\nls: cannot access 'nope': No such file or directory\n");
    expect(sh("ls -z")).toBe("[exit=2]\n\n[stderr]\nls: invalid option -- 'z'\n");
  });

  it("cat: several files, stdin, -n", () => {
    expect(sh("cat src/app/main.py names.txt | head -2")).toBe("[exit=0]\nprint('hi')\npear\n");
    expect(sh("echo a | cat")).toBe("[exit=0]\na\n");
    expect(sh("cat -n src/app/util.py")).toBe("[exit=0]\n     1\tdef f():\n     2\t    return 1\n");
  });

  it("grep: -n -i -c -v -l -r -w, regexes, several files", () => {
    expect(sh("grep ERROR logs/app.log")).toBe("[exit=0]\nERROR disk full\nERROR again\n");
    expect(sh("grep -c ERROR logs/app.log")).toBe("[exit=0]\n2\n");
    expect(sh("grep -ci error logs/app.log")).toBe("[exit=0]\n3\n");
    expect(sh("grep -n WARN logs/app.log")).toBe("[exit=0]\n3:WARN slow\n");
    expect(sh("grep -vc ERROR logs/app.log")).toBe("[exit=0]\n3\n");
    expect(sh("grep '^ERROR.*full$' logs/app.log")).toBe("[exit=0]\nERROR disk full\n");
    expect(sh("grep -E 'disk|slow' logs/app.log")).toBe("[exit=0]\nERROR disk full\nWARN slow\n");
    expect(sh("grep 'disk\\|slow' logs/app.log")).toBe("[exit=0]\nERROR disk full\nWARN slow\n");
    expect(sh("grep 'f(' src/app/util.py")).toBe("[exit=0]\ndef f():\n");
    expect(sh("grep -r return src")).toBe("[exit=0]\nsrc/app/util.py:    return 1\n");
    expect(sh("cd src && grep -rn print")).toBe("[exit=0]\napp/main.py:1:print('hi')\n");
    expect(sh("grep -rl 'print' /workspace/src")).toBe("[exit=0]\n/workspace/src/app/main.py\n");
    expect(sh("grep -c pear names.txt src/README.md")).toBe("[exit=0]\nnames.txt:2\nsrc/README.md:0\n");
    expect(sh("grep -w app names.txt")).toBe("[exit=1]\n");
    expect(sh("grep nothing names.txt")).toBe("[exit=1]\n");
    expect(sh("grep x src")).toBe("[exit=2]\n\n[stderr]\ngrep: src: Is a directory\n");
    expect(sh("grep x nope")).toBe("[exit=2]\n\n[stderr]\ngrep: nope: No such file or directory\n");
  });

  it("wc: lines, words, bytes", () => {
    expect(sh("wc -l names.txt")).toBe("[exit=0]\n6 names.txt\n");
    expect(sh("wc -w logs/app.log")).toBe("[exit=0]\n11 logs/app.log\n");
    expect(sh("printf 'é' | wc -c")).toBe("[exit=0]\n2\n");
    expect(sh("echo a b | wc")).toBe("[exit=0]\n      1       2       4\n");
    expect(sh("wc -l names.txt logs/app.log")).toBe("[exit=0]\n 6 names.txt\n 5 logs/app.log\n11 total\n");
  });

  it("head and tail", () => {
    expect(sh("head -n 2 names.txt")).toBe("[exit=0]\npear\napple\n");
    expect(sh("head -1 names.txt")).toBe("[exit=0]\npear\n");
    expect(sh("tail -n 2 names.txt")).toBe("[exit=0]\napple\napple\n");
    expect(sh("tail -n +5 names.txt")).toBe("[exit=0]\napple\napple\n");
    expect(sh("head -n 1 names.txt src/README.md")).toBe("[exit=0]\n==> names.txt <==\npear\n\n==> src/README.md <==\nreadme\n");
  });

  it("sort and uniq", () => {
    expect(sh("sort names.txt | uniq")).toBe("[exit=0]\napple\nfig\npear\n");
    expect(sh("sort -u -r names.txt")).toBe("[exit=0]\npear\nfig\napple\n");
    expect(sh("printf '10\\n9\\n100\\n' | sort -n")).toBe("[exit=0]\n9\n10\n100\n");
    expect(sh("printf 'b\\nB\\na\\n' | sort")).toBe("[exit=0]\nB\na\nb\n");
    expect(sh("uniq -c names.txt")).toBe("[exit=0]\n      1 pear\n      1 apple\n      1 pear\n      1 fig\n      2 apple\n");
  });

  it("echo and printf", () => {
    expect(sh("echo -n a; echo b")).toBe("[exit=0]\nab\n");
    expect(sh("echo -e 'a\\tb'")).toBe("[exit=0]\na\tb\n");
    expect(sh("printf '%s=%d\\n' a 1 b 2")).toBe("[exit=0]\na=1\nb=2\n");
    expect(sh("printf '%5s|%-3s|%03d%%\\n' x y 7")).toBe("[exit=0]\n    x|y  |007%\n");
    expect(sh("printf %s abc")).toBe("[exit=0]\nabc");
    expect(sh("printf '%d\\n' x")).toBe("[exit=1]\n0\n\n[stderr]\nprintf: 'x': invalid number\n");
  });

  it("mkdir, touch, rm, mv, cp", () => {
    const fs = workspace();
    expect(sh("mkdir a && mkdir -p a/b/c && touch a/b/c/f && ls a/b/c", fs)).toBe("[exit=0]\nf\n");
    expect(sh("mkdir a", fs)).toBe("[exit=1]\n\n[stderr]\nmkdir: cannot create directory 'a': File exists\n");
    expect(sh("mkdir x/y", fs)).toBe("[exit=1]\n\n[stderr]\nmkdir: cannot create directory 'x/y': No such file or directory\n");
    expect(sh("rm a", fs)).toBe("[exit=1]\n\n[stderr]\nrm: cannot remove 'a': Is a directory\n");
    expect(sh("rm -rf a nope && ls", fs)).toBe("[exit=0]\nlogs\nnames.txt\nsrc\n");
    expect(sh("rm nope", fs)).toBe("[exit=1]\n\n[stderr]\nrm: cannot remove 'nope': No such file or directory\n");
    expect(sh("cp names.txt n2.txt && mv n2.txt logs && ls logs", fs)).toBe("[exit=0]\napp.log\nn2.txt\n");
    expect(sh("cp src lib", fs)).toBe("[exit=1]\n\n[stderr]\ncp: -r not specified; omitting directory 'src'\n");
    expect(sh("cp -r src lib && find lib -type f", fs)).toBe("[exit=0]\nlib/README.md\nlib/app/main.py\nlib/app/util.py\n");
    expect(sh("mv lib/app/main.py lib/app/start.py && ls lib/app", fs)).toBe("[exit=0]\nstart.py\nutil.py\n");
    expect(sh("mv nope x", fs)).toBe("[exit=1]\n\n[stderr]\nmv: cannot stat 'nope': No such file or directory\n");
  });

  it("find: -name, -type, -maxdepth, default path", () => {
    expect(sh("find src -name '*.py'")).toBe("[exit=0]\nsrc/app/main.py\nsrc/app/util.py\n");
    expect(sh("find /workspace/src -type d")).toBe("[exit=0]\n/workspace/src\n/workspace/src/app\n");
    expect(sh("cd src && find . -maxdepth 1")).toBe("[exit=0]\n.\n./README.md\n./app\n");
    expect(sh("find nope")).toBe("[exit=1]\n\n[stderr]\nfind: 'nope': No such file or directory\n");
    expect(sh("find . -size 1")).toBe("[exit=1]\n\n[stderr]\nfind: unknown predicate '-size'\n");
  });

  it("cd and pwd keep the current directory in the state", () => {
    const fs = workspace();
    expect(sh("cd src/app && pwd", fs)).toBe("[exit=0]\n/workspace/src/app\n");
    expect(sh("cat main.py", fs)).toBe("[exit=0]\nprint('hi')\n");
    expect(fs.toJSON().cwd).toBe("/workspace/src/app");
    expect(sh("cd && pwd", fs)).toBe("[exit=0]\n/workspace\n");
    expect(sh("cd names.txt", fs)).toBe("[exit=1]\n\n[stderr]\ncd: names.txt: Not a directory\n");
  });

  it("base64, dirname, basename, tee, true, false", () => {
    expect(sh("echo hi | base64")).toBe("[exit=0]\naGkK\n");
    expect(sh("printf %s aGkK | base64 -d")).toBe("[exit=0]\nhi\n");
    expect(sh("echo '!!' | base64 --decode")).toBe("[exit=1]\n\n[stderr]\nbase64: invalid input\n");
    expect(sh("dirname /a/b/ c /")).toBe("[exit=0]\n/a\n.\n/\n");
    expect(sh("basename /a/b.py .py")).toBe("[exit=0]\nb\n");
    const fs = workspace();
    expect(sh("echo t | tee t.txt", fs)).toBe("[exit=0]\nt\n");
    expect(fs.readFile("/workspace/t.txt")).toBe("t\n");
    expect(sh("true && false")).toBe("[exit=1]\n");
  });
});

describe("names a model writes are looked up as own keys only", () => {
  it("$constructor is an unset variable, --constructor an unknown option, \\\\_ no escape", () => {
    expect(sh("echo [$constructor][$toString][$HOME]")).toBe("[exit=0]\n[][][/workspace]\n");
    expect(sh("ls --constructor")).toMatch(/^\[exit=2\]\n\n\[stderr\]\nls: unrecognized option '--constructor'/);
    expect(sh("sort --toString names.txt")).toMatch(/unrecognized option '--toString'/);
  });
});
