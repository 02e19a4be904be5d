import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Map;
import org.neo4j.cli.AdminTool;
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
        Path home = Path.of(args.length > 0 ? args[0] : "neo4j-home").toAbsolutePath();
        String passwordFile = System.getProperty("graphlink.passwordFile");
        if (passwordFile != null && !passwordFile.isEmpty()) {
            if (Boolean.getBoolean("graphlink.resetPassword")) {
                resetPassword(home, readPassword(Path.of(passwordFile)));
                return;
            }
            writeInitialPassword(home, readPassword(Path.of(passwordFile)));
        }
        DatabaseManagementService dbms = new DatabaseManagementServiceBuilder(home)
                .loadPropertiesFromFile(home.resolve("conf/neo4j.conf"))
                .build();
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            System.out.println("NEO4J_STOPPING");
            System.out.flush();
            dbms.shutdown();
            System.out.println("NEO4J_STOPPED");
            System.out.flush();
        }, "neo4j-shutdown"));
        dbms.database("neo4j").executeTransactionally("RETURN 1");
        System.out.println("NEO4J_READY");
        System.out.flush();
        if (Boolean.getBoolean("neo4j.exitOnStdinEof")) {
            while (System.in.read() != -1) {
                // wait for the parent to close our stdin (or die)
            }
            System.exit(0);  // runs the shutdown hook
        }
        Thread.currentThread().join();
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

    /** Set the password of {@code neo4j} in the system database, with no connector open (embedded access). */
    private static void resetPassword(Path home, String password) {
        DatabaseManagementService dbms = new DatabaseManagementServiceBuilder(home)
                .loadPropertiesFromFile(home.resolve("conf/neo4j.conf"))
                .setConfig(BoltConnector.enabled, false)
                .setConfig(HttpConnector.enabled, false)
                .build();
        try {
            dbms.database("system").executeTransactionally(
                    "ALTER USER neo4j SET PASSWORD $password CHANGE NOT REQUIRED", Map.of("password", password));
        } finally {
            dbms.shutdown();
        }
        System.out.println("NEO4J_PASSWORD_RESET");
        System.out.flush();
    }
}
