import ArgumentParser
EggsCommand.main()
