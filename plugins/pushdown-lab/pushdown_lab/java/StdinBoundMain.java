// Runs another class's main, and ends the JVM when stdin reaches end of file: a server
// started this way by a test process ends with that process, however it ends (even SIGKILL).
import java.io.IOException;
import java.util.Arrays;

public final class StdinBoundMain {
    public static void main(String[] args) throws Throwable {
        Thread watcher = new Thread(() -> {
            try {
                while (System.in.read() >= 0) {
                    // nothing is ever written: wait for end of file
                }
            } catch (IOException e) {
                // a broken pipe ends it too
            }
            Runtime.getRuntime().halt(0);
        }, "stdin-bound");
        watcher.setDaemon(true);
        watcher.start();
        String[] rest = Arrays.copyOfRange(args, 1, args.length);
        Class.forName(args[0]).getMethod("main", String[].class).invoke(null, (Object) rest);
    }
}
