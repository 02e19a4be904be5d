import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.KeyStore;
import java.security.SecureRandom;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.neo4j.cli.AdminTool;
import org.neo4j.cli.ExecutionContext;
import org.neo4j.configuration.Config;
import org.neo4j.configuration.GraphDatabaseSettings;
import org.neo4j.configuration.connectors.BoltConnector;
import org.neo4j.configuration.connectors.HttpConnector;
import org.neo4j.dbms.api.DatabaseManagementService;
import org.neo4j.dbms.api.DatabaseManagementServiceBuilder;
import org.neo4j.io.fs.DefaultFileSystemAbstraction;
import org.neo4j.io.fs.FileSystemAbstraction;
import org.neo4j.kernel.impl.security.User;
import org.neo4j.logging.NullLogProvider;
import org.neo4j.memory.EmptyMemoryTracker;
import org.neo4j.server.security.SecureHasher;
import org.neo4j.server.security.SystemGraphCredential;
import org.neo4j.server.security.auth.CommunitySecurityModule;
import org.neo4j.server.security.auth.FileUserRepository;

/**
 * Starts Neo4j Community (embedded DBMS with Bolt and, if enabled, HTTP + Browser) from {@code <home>/conf/neo4j.conf}.
 *
 * <p>Usage: {@code java -cp <runtime>/classes:<runtime>/lib/* Neo4jLauncher <home>}. Every setting lives in the
 * conf file written by graphlink/store/server.py, so this class stays version-agnostic. Prints {@code NEO4J_READY}
 * once the default database answers a query. SIGTERM / Ctrl-C run the shutdown hook, which shuts the DBMS down
 * cleanly (store files are consistent afterwards). With {@code -Dneo4j.exitOnStdinEof=true} it also exits cleanly when
 * its stdin closes, so a test process that dies never leaves an orphan JVM.
 *
 * <p>With {@code -Dgraphlink.passwordFile=<file>} it first writes the password of the user {@code neo4j} (read from
 * that file) to {@code data/dbms/auth.ini}, exactly as {@code neo4j-admin dbms set-initial-password} does; the
 * password never appears on a command line. Neo4j takes it when it creates the system database, i.e. before Bolt
 * accepts any connection, so there is no window in which the default password works. With
 * {@code -Dgraphlink.resetPassword=true} as well it sets that password on an existing database instead (Bolt and
 * HTTP stay off), prints {@code NEO4J_PASSWORD_RESET} and exits: the way back when the password file was lost.
 *
 * <p>It can shut its DBMS down and open it again without a new JVM when asked through files in
 * {@code <home>/control/} ({@link #pauseLoop}): how a bulk import swaps in the store it built. Through the same folder
 * it runs the bulk importer itself ({@link #runImport}), in this warm JVM, into a staged store elsewhere.
 *
 * <p>With {@code -Dgraphlink.tlsDir=<dir>} it makes sure {@code <dir>} holds the key and self-signed certificate of
 * Bolt's TLS (the {@code dbms.ssl.policy.bolt} folder of the conf file) before anything opens: {@code private.key}
 * (PKCS#8, mode 0600) and {@code public.crt}, an EC P-256 certificate for 127.0.0.1 and localhost made by the JDK's
 * {@code keytool}, kept across starts and made anew when missing or within 30 days of expiry. Clients pin exactly
 * that certificate, so nothing that merely listens on the port can complete their TLS handshake (graphlink/store/
 * server.py). With {@code -Dgraphlink.setPassword=true} as well, every start of an existing database sets the
 * password of {@code neo4j} from the password file (embedded, right after the DBMS opens, before {@code NEO4J_READY}):
 * graphlink gives its server a new password at every start. Without it the file is the initial password only, as for
 * the official Neo4j image (docker/neo4j uses it that way).
 *
 * <p>{@code Neo4jLauncher certificate <dir>} only makes that key and certificate (tests use it for a stranger's).
 *
 * <p>{@code Neo4jLauncher admin <neo4j-admin arguments>} runs {@code neo4j-admin} ({@link AdminTool}, e.g.
 * {@code database import full ...}) in this JVM with this class path; {@code NEO4J_HOME} names its home (conf/). It
 * halts when its stdin closes, so a bulk import whose parent process died stops instead of writing on as an orphan.
 */
public final class Neo4jLauncher {
    private Neo4jLauncher() {}

    public static void main(String[] args) throws Exception {
        if (args.length > 0 && args[0].equals("admin")) {
            admin(Arrays.copyOfRange(args, 1, args.length));
            return;
        }
        if (args.length > 1 && args[0].equals("certificate")) {  // only the key and certificate, into args[1]
            ensureCertificate(Path.of(args[1]));
            return;
        }
        Path home = Path.of(args.length > 0 ? args[0] : "neo4j-home").toAbsolutePath();
        String passwordFile = System.getProperty("graphlink.passwordFile");
        if (passwordFile != null && !passwordFile.isEmpty()) {
            if (Boolean.getBoolean("graphlink.resetPassword")) {
                resetPassword(home, readPassword(Path.of(passwordFile)));
                return;
            }
            String initial = readPassword(Path.of(passwordFile));
            writeInitialPassword(home, initial);
            if (Boolean.getBoolean("graphlink.setPassword")) {  // graphlink's server: the file's password every start
                password = initial;
            }
        }
        String tlsDir = System.getProperty("graphlink.tlsDir");
        if (tlsDir != null && !tlsDir.isEmpty()) {
            ensureCertificate(Path.of(tlsDir));
        }
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            System.out.println("NEO4J_STOPPING");
            System.out.flush();
            synchronized (Neo4jLauncher.class) {
                stopping = true;
                if (dbms != null) {
                    dbms.shutdown();
                    dbms = null;
                }
            }
            System.out.println("NEO4J_STOPPED");
            System.out.flush();
        }, "neo4j-shutdown"));
        open(home);
        if (Boolean.getBoolean("neo4j.exitOnStdinEof")) {
            Thread stdin = new Thread(() -> {
                try {
                    while (System.in.read() != -1) {
                        // wait for the parent to close our stdin (or die)
                    }
                } catch (IOException ignored) {
                    // the same: the parent is gone
                }
                System.exit(0);  // runs the shutdown hook
            }, "graphlink-stdin-eof");
            stdin.setDaemon(true);
            stdin.start();
        }
        pauseLoop(home.resolve("control"));
    }

    /** The running DBMS (null while paused or stopped); guarded by the class lock. */
    private static DatabaseManagementService dbms;
    private static boolean stopping;
    /** The password of {@code neo4j} from the password file (null without one): set at every open. */
    private static String password;

    private static void open(Path home) {
        DatabaseManagementService built = new DatabaseManagementServiceBuilder(home)
                .loadPropertiesFromFile(home.resolve("conf/neo4j.conf"))
                .build();
        synchronized (Neo4jLauncher.class) {
            if (stopping) {  // SIGTERM came while it started
                built.shutdown();
                return;
            }
            dbms = built;
        }
        if (password != null) {  // a database created earlier keeps its old password unless it is set here
            setPassword(built, password);
        }
        built.database("neo4j").executeTransactionally("RETURN 1");
        System.out.println("NEO4J_READY");
        System.out.flush();
    }

    /**
     * Shut the DBMS down and open it again in this JVM, on request: the bulk import's swap of the store files
     * (graphlink/store/bulk.py) without a new JVM, whose class loading and JIT warm-up take most of a start.
     *
     * <p>Protocol, files in {@code control/} (inside the private server home): the client writes {@code pause}
     * holding its PID; this loop (polling every 100 ms) shuts the DBMS down and writes {@code paused}; the client
     * swaps the store and deletes {@code pause}; this loop deletes {@code paused} and opens the DBMS again. If the
     * client process dies while the DBMS is paused, the JVM exits instead of opening a store that may be half
     * swapped: the next {@code graphlink neo4j start} completes the swap first.
     */
    private static void pauseLoop(Path control) throws Exception {
        Path pause = control.resolve("pause");
        Path paused = control.resolve("paused");
        Files.createDirectories(control);
        Files.deleteIfExists(paused);
        Files.deleteIfExists(pause);  // a request left over from an earlier JVM is void
        Path home = control.getParent();
        Path importRequest = control.resolve("import");
        while (true) {
            Thread.sleep(100);
            if (Files.exists(importRequest)) {
                runImport(control, importRequest);
                continue;
            }
            if (!Files.exists(pause)) {
                continue;
            }
            long owner;
            try {
                owner = Long.parseLong(Files.readString(pause).strip());
            } catch (IOException | NumberFormatException e) {
                continue;  // being written
            }
            synchronized (Neo4jLauncher.class) {
                if (stopping || dbms == null) {
                    return;
                }
                System.out.println("NEO4J_PAUSING for pid " + owner);
                System.out.flush();
                dbms.shutdown();
                dbms = null;
            }
            Files.writeString(paused, Long.toString(ProcessHandle.current().pid()));
            System.out.println("NEO4J_PAUSED");
            System.out.flush();
            while (Files.exists(pause)) {
                if (!ProcessHandle.of(owner).map(ProcessHandle::isAlive).orElse(false)) {
                    System.out.println("graphlink: pid " + owner + " died while the database was paused; exiting");
                    System.out.flush();
                    Files.deleteIfExists(paused);
                    System.exit(4);
                }
                Thread.sleep(50);
            }
            Files.deleteIfExists(paused);
            try {
                open(home);
            } catch (Throwable e) {  // no DBMS: exit, so that status says so, instead of idling without one
                e.printStackTrace();
                System.out.println("graphlink: the database could not be opened again; exiting");
                System.out.flush();
                System.exit(5);
            }
        }
    }

    /**
     * {@code neo4j-admin database import full} in this JVM, while the DBMS keeps serving: the bulk import's step 2
     * (graphlink/store/bulk.py) without a JVM of its own, whose start-up and cold JIT take most of a 1e6-row import.
     *
     * <p>Protocol: the client renames a complete file {@code control/import} into place: line 1 a request id, line 2
     * the importer's home (its {@code conf/neo4j.conf} names the staged data folder), line 3 the log file to append
     * to, then one neo4j-admin argument per line (file names absolute). This loop deletes the request, runs the
     * import and renames {@code "<id> <exit code>"} into {@code control/import.done}. The import cannot be cancelled;
     * a client that gave up deletes the staged folder, and the import fails there.
     */
    private static void runImport(Path control, Path request) throws Exception {
        List<String> lines;
        try {
            lines = Files.readAllLines(request, StandardCharsets.UTF_8);
        } catch (IOException e) {
            return;  // renamed into place, so complete: a read error is a vanished request
        }
        Files.deleteIfExists(request);
        if (lines.size() < 3) {
            return;
        }
        Path importHome = Path.of(lines.get(1));
        int code;
        try (PrintStream log = new PrintStream(new FileOutputStream(lines.get(2), true), true, StandardCharsets.UTF_8)) {
            try {
                String[] args = lines.subList(3, lines.size()).toArray(new String[0]);
                code = AdminTool.execute(new ExecutionContext(importHome, importHome.resolve("conf"), log, log,
                        new DefaultFileSystemAbstraction()), args);
            } catch (Throwable e) {  // the DBMS must keep serving whatever the importer throws
                e.printStackTrace(log);
                code = 70;
            }
        }
        Path tmp = control.resolve("import.done.tmp");
        Files.writeString(tmp, lines.get(0) + " " + code + "\n");
        Files.move(tmp, control.resolve("import.done"), StandardCopyOption.REPLACE_EXISTING,
                StandardCopyOption.ATOMIC_MOVE);
    }

    /** neo4j-admin in this JVM; a daemon thread halts the JVM (no cleanup: the output is thrown away) on stdin EOF. */
    private static void admin(String[] args) {
        Thread watchdog = new Thread(() -> {
            try {
                while (System.in.read() != -1) {
                    // the parent keeps our stdin open while it waits for us
                }
            } catch (IOException ignored) {
                // a broken pipe means the same: the parent is gone
            }
            System.err.println("graphlink: the parent process closed stdin; neo4j-admin stops");
            Runtime.getRuntime().halt(3);
        }, "graphlink-stdin-watchdog");
        watchdog.setDaemon(true);
        watchdog.start();
        AdminTool.main(args);  // exits with the command's exit code
    }

    /**
     * Make sure {@code dir} holds {@code private.key} and {@code public.crt} for Bolt's TLS, valid for 30 more days.
     * A new pair is made by {@code keytool} (next to this JVM's {@code java}) into a PKCS#12 store with a random
     * store password passed through the environment (never on a command line), then written as PEM, the private key
     * with mode 0600. The store is deleted afterwards.
     */
    private static void ensureCertificate(Path dir) throws Exception {
        Path key = dir.resolve("private.key");
        Path crt = dir.resolve("public.crt");
        Files.createDirectories(dir.resolve("trusted"));
        Files.createDirectories(dir.resolve("revoked"));
        if (Files.isRegularFile(key) && Files.isRegularFile(crt) && validFor(crt, Duration.ofDays(30))) {
            return;
        }
        Path store = dir.resolve("bolt.p12");
        Files.deleteIfExists(store);
        byte[] secret = new byte[24];
        new SecureRandom().nextBytes(secret);
        String storePass = Base64.getUrlEncoder().withoutPadding().encodeToString(secret);
        Path keytool = Path.of(System.getProperty("java.home"), "bin", "keytool");
        ProcessBuilder pb = new ProcessBuilder(keytool.toString(), "-genkeypair", "-alias", "bolt",
                "-keyalg", "EC", "-groupname", "secp256r1", "-sigalg", "SHA256withECDSA", "-validity", "3650",
                "-dname", "CN=graphlink local Neo4j", "-ext", "SAN=ip:127.0.0.1,dns:localhost",
                "-ext", "BC:c=ca:true,pathlen:0", "-ext", "KU:c=digitalSignature,keyCertSign",
                "-ext", "EKU=serverAuth", "-keystore", store.toString(), "-storetype", "PKCS12",
                "-storepass:env", "GRAPHLINK_TLS_STOREPASS", "-keypass:env", "GRAPHLINK_TLS_STOREPASS", "-noprompt");
        pb.environment().put("GRAPHLINK_TLS_STOREPASS", storePass);
        pb.redirectErrorStream(true);
        Process proc = pb.start();
        byte[] output = proc.getInputStream().readAllBytes();
        if (!proc.waitFor(120, TimeUnit.SECONDS) || proc.exitValue() != 0) {
            throw new IllegalStateException("keytool failed: " + new String(output, StandardCharsets.UTF_8));
        }
        KeyStore ks = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(store)) {
            ks.load(in, storePass.toCharArray());
        }
        byte[] pkcs8 = ks.getKey("bolt", storePass.toCharArray()).getEncoded();
        byte[] der = ks.getCertificate("bolt").getEncoded();
        Files.deleteIfExists(store);
        writePem(key, "PRIVATE KEY", pkcs8, "rw-------");
        writePem(crt, "CERTIFICATE", der, "rw-r--r--");
        System.out.println("NEO4J_TLS_CERTIFICATE " + crt);
        System.out.flush();
    }

    private static boolean validFor(Path crt, Duration margin) {
        try (InputStream in = Files.newInputStream(crt)) {
            X509Certificate cert = (X509Certificate) CertificateFactory.getInstance("X.509").generateCertificate(in);
            return cert.getNotAfter().toInstant().isAfter(Instant.now().plus(margin));
        } catch (Exception e) {
            return false;
        }
    }

    /** Write a PEM file atomically (a temporary file with {@code perms}, then renamed onto {@code target}). */
    private static void writePem(Path target, String label, byte[] der, String perms) throws IOException {
        String body = Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII)).encodeToString(der);
        String pem = "-----BEGIN " + label + "-----\n" + body + "\n-----END " + label + "-----\n";
        Path tmp = target.resolveSibling("." + target.getFileName() + ".tmp");
        Files.deleteIfExists(tmp);
        Files.createFile(tmp, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString(perms)));
        Files.writeString(tmp, pem, StandardCharsets.US_ASCII);
        Files.move(tmp, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }

    private static String readPassword(Path passwordFile) throws Exception {
        String password = new String(Files.readAllBytes(passwordFile), StandardCharsets.UTF_8).strip();
        if (password.isEmpty()) {
            throw new IllegalArgumentException("empty password file " + passwordFile);
        }
        return password;
    }

    /** The initial-user file ({@code auth.ini}) with a salted hash of the password; what set-initial-password writes. */
    private static void writeInitialPassword(Path home, String password) throws Exception {
        Config config = Config.newBuilder()
                .set(GraphDatabaseSettings.neo4j_home, home)
                .fromFileNoThrow(home.resolve("conf/neo4j.conf"))
                .build();
        Path file = CommunitySecurityModule.getInitialUserRepositoryFile(config);
        FileSystemAbstraction fs = new DefaultFileSystemAbstraction();
        fs.mkdirs(file.getParent());
        if (fs.fileExists(file)) {
            fs.deleteFile(file);
        }
        FileUserRepository users = new FileUserRepository(fs, file, NullLogProvider.getInstance(),
                EmptyMemoryTracker.INSTANCE);
        users.start();
        users.create(new User("neo4j", null,
                SystemGraphCredential.createCredentialForPassword(password.getBytes(StandardCharsets.UTF_8),
                        new SecureHasher()), false, false));
        users.shutdown();
    }

    /** Set the password of {@code neo4j} (embedded access); the password it has already is left as it is. */
    private static void setPassword(DatabaseManagementService service, String newPassword) {
        try {
            service.database("system").executeTransactionally(
                    "ALTER USER neo4j SET PASSWORD $password CHANGE NOT REQUIRED", Map.of("password", newPassword));
        } catch (RuntimeException e) {
            if (!String.valueOf(e.getMessage()).contains("cannot be the same")) {
                throw e;
            }
        }
    }

    /** Set the password of {@code neo4j} in the system database, with no connector open (embedded access). */
    private static void resetPassword(Path home, String password) {
        DatabaseManagementService dbms = new DatabaseManagementServiceBuilder(home)
                .loadPropertiesFromFile(home.resolve("conf/neo4j.conf"))
                .setConfig(BoltConnector.enabled, false)
                .setConfig(HttpConnector.enabled, false)
                .build();
        try {
            setPassword(dbms, password);
        } finally {
            dbms.shutdown();
        }
        System.out.println("NEO4J_PASSWORD_RESET");
        System.out.flush();
    }
}
